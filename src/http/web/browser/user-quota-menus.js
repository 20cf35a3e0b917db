/*
 * user_quota plugin (see user-quota-common.js): "Quota and assetstore policies" (a site administrator) or "Quota"
 * (anyone else with admin access) in the action menus of the user and collection pages, before their delete entry,
 * opening the quota dialog (views/extendView.js, templates/*ViewPoliciesMenu.pug). A page opened with
 * `?dialog=quota` opens it at once, as Girder's dialogs do.
 */
(function () {
  'use strict';
  const girder = window.girder;
  const $ = girder.$;
  const quota = girder.plugins.user_quota;
  const AccessType = girder.constants.AccessType;
  const getCurrentUser = girder.auth.getCurrentUser;
  const wrap = girder.utilities.PluginUtils.wrap;

  function menuItem(modelType, model) {
    if (model.getAccessLevel() < AccessType.ADMIN) return '';
    const label = getCurrentUser().get('admin') ? 'Quota and assetstore policies' : 'Quota';
    return `<li role="presentation"><a class="g-${modelType}-policies" role="menuitem"><i class="icon-box"></i>${label}</a></li>`;
  }

  function extendView(View, modelType) {
    View.prototype.events[`click .g-${modelType}-policies`] = 'editPolicies';

    const initialize = View.prototype.initialize;
    View.prototype.initialize = function (settings) {
      this.quota = (settings || {}).dialog === 'quota';
      initialize.apply(this, arguments);
    };

    wrap(View, 'render', function (render) {
      render.call(this);
      this.$(`.g-${modelType}-header a.g-delete-${modelType}`).closest('li').before(menuItem(modelType, this.model));
      if (this.quota) {
        this.quota = null;
        this.editPolicies();
      }
      return this;
    });

    View.prototype.editPolicies = function () {
      const widget = new quota.QuotaPoliciesWidget({
        el: $('#g-dialog-container'),
        model: this.model,
        modelType: modelType,
        parentView: this,
      })
        .on('g:saved', this.render, this)
        .on('g:hidden', () => widget.destroy());
    };
  }

  extendView(girder.views.body.UserView, 'user');
  extendView(girder.views.body.CollectionView, 'collection');
})();
