/*
 * user_quota plugin (see user-quota-common.js): its configuration page, `#plugins/user_quota/config`, linked from the
 * admin console's plugin list: the default quotas of users and collections (settings `user_quota.default_user_quota`
 * and `user_quota.default_collection_quota`; views/ConfigView.js, templates/configView.pug, routes.js).
 */
(function () {
  'use strict';
  const girder = window.girder;
  const quota = girder.plugins.user_quota;
  const esc = quota.escape;
  const restRequest = girder.rest.restRequest;
  const KEYS = { user: 'user_quota.default_user_quota', collection: 'user_quota.default_collection_quota' };

  function resourceField(resource) {
    const id = `g-user-quota-${resource.model}-size-value`;
    return `
      <div class="form-group">
        <label class="control-label" for="${id}">Default ${resource.name} File Size Quota</label>
        <p class="g-quota-description">This is the maximum allowed size of all files for individual
          ${resource.model}s, unless that ${resource.model}'s quota is explicitly set.</p>
        <input id="${id}" class="input-sm g-sizeValue form-control" type="text" value="${esc(resource.sizeValue)}"
          placeholder="Maximum allowed size of all files, or blank for no limit">
        <select id="g-user-quota-${resource.model}-size-units" class="form-control input-sm g-sizeUnits">
          ${quota.unitOptions(resource.sizeUnits)}
        </select>
      </div>`;
  }

  function configTemplate(resources) {
    return `
      <div class="g-config-breadcrumb-container"></div>
      <p class="g-quota-description">Quotas limit the maximum storage space available for each user and collection.</p>
      <form id="g-user-quota-form" role="form">
        ${resources.map(resourceField).join('')}
        <p id="g-user-quota-error-message" class="g-validation-failed-message"></p>
        <input class="btn btn-sm btn-primary" type="submit" value="Save">
      </form>`;
  }

  const sizeFromForm = (view, model) =>
    quota.valueAndUnitsToSize(
      view.$(`#g-user-quota-${model}-size-value`).val(),
      view.$(`#g-user-quota-${model}-size-units`).val()
    );

  const ConfigView = girder.views.View.extend({
    events: {
      'submit #g-user-quota-form': function (event) {
        event.preventDefault();
        this.$('#g-user-quota-error-message').empty();
        this._saveSettings([
          { key: KEYS.user, value: sizeFromForm(this, 'user') },
          { key: KEYS.collection, value: sizeFromForm(this, 'collection') },
        ]);
      },
    },

    initialize: function () {
      restRequest({
        method: 'GET',
        url: 'system/setting',
        data: { list: JSON.stringify([KEYS.user, KEYS.collection]) },
      }).done((resp) => {
        this.settings = resp;
        this.render();
      });
    },

    render: function () {
      const resource = (model, name) =>
        Object.assign({ model: model, name: name }, quota.sizeToValueAndUnits(this.settings[KEYS[model]]));
      this.$el.html(configTemplate([resource('user', 'User'), resource('collection', 'Collection')]));
      // A render replaces the markup the breadcrumb lived in: it gets a new one.
      if (this.breadcrumb) this.breadcrumb.destroy();
      this.breadcrumb = new girder.views.widgets.PluginConfigBreadcrumbWidget({
        pluginName: 'User and collection quotas and policies',
        el: this.$('.g-config-breadcrumb-container'),
        parentView: this,
      }).render();
      return this;
    },

    _saveSettings: function (settings) {
      restRequest({
        method: 'PUT',
        url: 'system/setting',
        data: { list: JSON.stringify(settings) },
        error: null,
      })
        .done(() => {
          girder.events.trigger('g:alert', { icon: 'ok', text: 'Settings saved.', type: 'success', timeout: 4000 });
        })
        .fail((resp) => {
          this.$('#g-user-quota-error-message').text(quota.failureOf(resp).message);
        });
    },
  });

  girder.utilities.PluginUtils.exposePluginConfig('user_quota', 'plugins/user_quota/config');
  girder.router.route('plugins/user_quota/config', 'userQuotaConfig', function () {
    girder.events.trigger('g:navigateTo', ConfigView);
  });
  quota.ConfigView = ConfigView;
})();
