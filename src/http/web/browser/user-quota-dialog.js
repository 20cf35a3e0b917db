/*
 * user_quota plugin (see user-quota-common.js): the quota dialog of a user or a collection
 * (views/QuotaPoliciesWidget.js and templates/quotaPoliciesWidget.pug). Everyone who opens it sees the quota in
 * force and the space left, with a used/free chart; a site administrator also edits the policy: the default quota or
 * a specific one, and the preferred and fallback assetstores. Girder draws the chart with ApexCharts, which the
 * served bundle does not expose, so it is a small SVG pie here.
 */
(function () {
  'use strict';
  const girder = window.girder;
  const $ = girder.$;
  const quota = girder.plugins.user_quota;
  const esc = quota.escape;
  const View = girder.views.View;
  const getCurrentUser = girder.auth.getCurrentUser;
  const formatSize = girder.misc.formatSize;
  const handleOpen = girder.dialog.handleOpen;
  const handleClose = girder.dialog.handleClose;

  /** The field that holds each policy key (the server names the key of a refused value in `field`). */
  const FIELD_INPUTS = {
    fileSizeQuota: '#g-user-quota-size-value',
    preferredAssetstore: '#g-preferredAssetstore',
    fallbackAssetstore: '#g-fallbackAssetstore',
  };

  const selected = (yes) => (yes ? ' selected' : '');
  const checked = (yes) => (yes ? ' checked' : '');

  function assetstoreOptions(assetstores, chosen) {
    return assetstores
      .map((store) => `<option value="${esc(store.id)}"${selected(chosen === store.id)}>${esc(store.name())}</option>`)
      .join('');
  }

  /** The administrator's part of the form: quota, preferred and fallback assetstores. */
  function policyFields(s) {
    const policy = s.quotaPolicy;
    return `
      <div class="form-group">
        <label class="control-label" for="g-user-quota-size-value">File Size Quota</label>
        <p class="g-quota-description">This is the maximum allowed size of all files.</p>
        <div class="radio"><label>
          <input id="g-defaultQuota" type="radio" name="defaultQuota" value="True"${checked(policy.useQuotaDefault !== false)}>
          Use the default quota: ${esc(s.defaultQuotaString)}</label></div>
        <div class="radio g-customQuota"><label>
          <input id="g-customQuota" type="radio" name="defaultQuota" value="False"${checked(policy.useQuotaDefault === false)}>
          Use a specific quota:</label></div>
        <input id="g-user-quota-size-value" class="input-sm g-sizeValue form-control" type="text"
          value="${esc(s.sizeValue ? s.sizeValue : '')}"
          placeholder="Maximum allowed size of all files, or blank for no limit">
        <select id="g-user-quota-size-units" class="form-control input-sm g-sizeUnits">${quota.unitOptions(s.sizeUnits)}</select>
      </div>
      <div class="form-group">
        <label class="control-label" for="g-preferredAssetstore">Preferred Assetstore</label>
        <p class="g-quota-description">Any file that is uploaded will be sent to this assetstore. Existing files are not moved.</p>
        <select id="g-preferredAssetstore" class="form-control input-sm">
          <option value="current"${selected(!policy.preferredAssetstore)}>Current Assetstore</option>
          ${assetstoreOptions(s.assetstores, policy.preferredAssetstore)}
        </select>
      </div>
      <div class="form-group">
        <label class="control-label" for="g-fallbackAssetstore">Fallback Assetstore</label>
        <p class="g-quota-description">This assetstore is used if the preferred assetstore is offline or unavailable.</p>
        <select id="g-fallbackAssetstore" class="form-control input-sm">
          <option value="current"${selected(!policy.fallbackAssetstore)}>Current Assetstore</option>
          ${assetstoreOptions(s.assetstores, policy.fallbackAssetstore)}
          <option value="none"${selected(policy.fallbackAssetstore === 'none')}>None</option>
        </select>
      </div>
      <div class="g-validation-failed-message"></div>`;
  }

  function dialogTemplate(s) {
    const admin = s.currentUser.get('admin');
    const footer = admin
      ? `<a class="btn btn-small btn-default" data-dismiss="modal">Cancel</a>
         <button class="g-save-policies btn btn-small btn-primary" type="submit"><i class="icon-edit"></i>Save</button>`
      : '<a class="btn btn-small btn-default" data-dismiss="modal">Close</a>';
    return `
      <div class="modal-dialog"><div class="modal-content">
        <form id="g-policies-edit-form" class="modal-form" role="form">
          <div class="modal-header">
            <button class="close" data-dismiss="modal" aria-hidden="true" type="button">&times;</button>
            <h4 class="modal-title">${admin ? 'Quota and Assetstore Policies for ' : 'Quota for '}${esc(s.name)}</h4>
          </div>
          <div class="modal-body">
            <div><b>Quota:</b><span class="g-quota-capacity"> ${esc(s.capacityString)}</span>
              <div class="g-quota-capacity-chart"></div></div>
            ${admin ? policyFields(s) : ''}
          </div>
          <div class="modal-footer">${footer}</div>
        </form>
      </div></div>`;
  }

  /** A used/free pie with its legend: one circle drawn as a dashed stroke (the used share) over a full one. */
  function capacityChart(used, free) {
    const turn = 2 * Math.PI * 25;
    const share = used + free > 0 ? (used / (used + free)) * turn : 0;
    return `
      <svg class="g-quota-pie" viewBox="0 0 100 100" width="130" height="130" role="img"
          aria-label="Used ${esc(formatSize(used))}, free ${esc(formatSize(free))}">
        <circle r="50" cx="50" cy="50" class="g-quota-pie-free"></circle>
        <circle r="25" cx="50" cy="50" class="g-quota-pie-used" stroke-width="50"
          stroke-dasharray="${share} ${turn}" transform="rotate(-90 50 50)"></circle>
      </svg>
      <ul class="g-quota-legend">
        <li><span class="g-quota-swatch g-quota-swatch-used"></span>Used (${esc(formatSize(used))})</li>
        <li><span class="g-quota-swatch g-quota-swatch-free"></span>Free (${esc(formatSize(free))})</li>
      </ul>`;
  }

  const QuotaPoliciesWidget = View.extend({
    events: {
      'submit #g-policies-edit-form': function (e) {
        e.preventDefault();
        this.updateQuotaPolicies({
          fileSizeQuota: quota.valueAndUnitsToSize(
            this.$('#g-user-quota-size-value').val(),
            this.$('#g-user-quota-size-units').val()
          ),
          useQuotaDefault: this.$('input:radio[name=defaultQuota]:checked').val() === 'True',
          preferredAssetstore: this.$('#g-preferredAssetstore').val(),
          fallbackAssetstore: this.$('#g-fallbackAssetstore').val(),
        });
        this.$('button.g-save-policies').girderEnable(false);
        this.$('.g-validation-failed-message').text('');
      },
      'input #g-user-quota-size-value': '_selectCustomQuota',
      'change #g-user-quota-size-units': '_selectCustomQuota',
    },

    initialize: function (settings) {
      this.model = settings.model;
      this.modelType = settings.modelType;
      // Read afresh each time (Girder reuses what the model holds): a policy saved here or a default changed
      // elsewhere since the last opening would otherwise show a stale quota in force.
      this.model.off('g:quotaPolicyFetched').on('g:quotaPolicyFetched', this.render, this).fetchQuotaPolicy(true);
    },

    _selectCustomQuota: function () {
      this.$('#g-customQuota').prop('checked', true);
    },

    /** The quota in force: the resource's own, or (as the policy says by default) the default one; null: none. */
    _quotaInForce: function () {
      const policy = this.model.get('quotaPolicy');
      let limit = policy.fileSizeQuota;
      if (policy.useQuotaDefault !== false) {
        limit = this.model.get('defaultQuota');
        if (!limit) limit = policy._currentFileSizeQuota;
      }
      return limit;
    },

    capacityString: function () {
      const limit = this._quotaInForce();
      if (!limit && limit !== 0) return 'Unlimited';
      const free = limit - this.model.get('size');
      if (free > 0) return `${formatSize(free)} free of ${formatSize(limit)}`;
      return `No space left of ${formatSize(limit)}`;
    },

    _renderChart: function () {
      const el = this.$('.g-quota-capacity-chart');
      const limit = this._quotaInForce();
      if (!limit) {
        el.addClass('g-no-chart');
        return;
      }
      const used = this.model.get('size');
      el.addClass('g-has-chart').html(capacityChart(used, Math.max(limit - used, 0)));
    },

    render: function () {
      const currentUser = getCurrentUser();
      const sizeInfo = quota.sizeToValueAndUnits(this.model.get('quotaPolicy').fileSizeQuota);
      const defaultQuota = this.model.get('defaultQuota');
      const modal = this.$el
        .html(
          dialogTemplate({
            currentUser: currentUser,
            name: this.model.name(),
            quotaPolicy: this.model.get('quotaPolicy'),
            sizeValue: sizeInfo.sizeValue,
            sizeUnits: sizeInfo.sizeUnits,
            assetstores: currentUser.get('admin') ? this.model.get('assetstoreList').models : [],
            capacityString: this.capacityString(),
            defaultQuotaString: !defaultQuota && defaultQuota !== 0 ? 'Unlimited' : formatSize(defaultQuota),
          })
        )
        .girderModal(this)
        .on('shown.bs.modal', () => this.$(FIELD_INPUTS.fileSizeQuota).trigger('focus'))
        .on('hidden.bs.modal', () => {
          handleClose('quota');
          this.trigger('g:hidden');
        });
      this._renderChart();
      modal.trigger($.Event('ready.girder.modal', { relatedTarget: modal }));
      handleOpen('quota');
      return this;
    },

    updateQuotaPolicies: function (fields) {
      Object.assign(this.model.get('quotaPolicy'), fields);
      this.model
        .off('g:quotaPolicySaved')
        .on(
          'g:quotaPolicySaved',
          function () {
            this.$el.modal('hide');
            this.trigger('g:saved', this.model);
          },
          this
        )
        .off('g:error')
        .on(
          'g:error',
          function (err) {
            const failure = quota.failureOf(err);
            this.$('.g-validation-failed-message').text(failure.message);
            this.$('button.g-save-policies').girderEnable(true);
            // Girder's plugin names the refused key in `extra` (RestException), a validation error in `field`.
            const key = failure.field || failure.extra;
            this.$(FIELD_INPUTS[key] || FIELD_INPUTS.fileSizeQuota).trigger('focus');
          },
          this
        )
        .updateQuotaPolicy();
    },
  });

  quota.QuotaPoliciesWidget = QuotaPoliciesWidget;
})();
