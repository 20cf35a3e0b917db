/*
 * user_quota plugin (see user-quota-common.js): the quota methods Girder's plugin adds to the user and collection
 * models (models/extendModel.js). fetchQuotaPolicy reads the policy, then the resource itself (its `size`, the usage),
 * then, for a site administrator, the assetstores and the default quota setting, and triggers
 * `g:quotaPolicyFetched`; updateQuotaPolicy saves the `quotaPolicy` attribute and triggers `g:quotaPolicySaved`
 * (or `g:error`).
 */
(function () {
  'use strict';
  const girder = window.girder;
  const restRequest = girder.rest.restRequest;
  const getCurrentUser = girder.auth.getCurrentUser;

  function extendModel(Model, modelType) {
    Model.prototype.updateQuotaPolicy = function () {
      restRequest({
        url: `${this.resourceName}/${this.id}/quota`,
        method: 'PUT',
        error: null,
        data: { policy: JSON.stringify(this.get('quotaPolicy')) },
      })
        .done(() => this.trigger('g:quotaPolicySaved'))
        .fail((err) => this.trigger('g:error', err));
      return this;
    };

    /** `force`: read again what this model already holds. */
    Model.prototype.fetchQuotaPolicy = function (force) {
      this.off('g:fetched').on('g:fetched', function () {
        this.fetchAssetstores(force);
      });
      if (!this.get('quotaPolicy') || force) {
        restRequest({ url: `${this.resourceName}/${this.id}/quota`, method: 'GET' })
          .done((resp) => {
            this.set('quotaPolicy', resp.quota);
            this.fetch();
          })
          .fail((err) => this.trigger('g:error', err));
      } else {
        this.fetch();
      }
      return this;
    };

    /** The assetstores a site administrator may prefer (the dialog's menus); nobody else sees them. */
    Model.prototype.fetchAssetstores = function (force) {
      if (getCurrentUser().get('admin') && (!this.get('assetstoreList') || force)) {
        this.set('assetstoreList', new girder.collections.AssetstoreCollection());
        this.get('assetstoreList')
          .on(
            'g:changed',
            function () {
              this.fetchDefaultQuota(force);
            },
            this
          )
          .fetch();
      } else {
        this.fetchDefaultQuota(force);
      }
      return this;
    };

    /** The default quota setting for this kind of resource (only a site administrator may read settings). */
    Model.prototype.fetchDefaultQuota = function (force) {
      if (getCurrentUser().get('admin') && (!this.get('defaultQuota') || force)) {
        restRequest({
          url: 'system/setting',
          method: 'GET',
          data: { key: `user_quota.default_${modelType}_quota` },
        }).done((resp) => {
          this.set('defaultQuota', resp);
          this.trigger('g:quotaPolicyFetched');
        });
      } else {
        this.trigger('g:quotaPolicyFetched');
      }
      return this;
    };
  }

  extendModel(girder.models.UserModel, 'user');
  extendModel(girder.models.CollectionModel, 'collection');
})();
