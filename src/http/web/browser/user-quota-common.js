/*
 * Girder's user_quota plugin, web part (Girder 5's plugins/user_quota/girder_user_quota/web_client, not published on
 * npm), ported to plain browser scripts that /system/plugin_static_files lists in this order:
 *   user-quota-common.js   what the others share (this file): HTML escaping, the size conversions, the units menu,
 *                          a refused request's message
 *   user-quota-models.js   quota methods on the user and collection models (models/extendModel.js)
 *   user-quota-dialog.js   the "Quota and assetstore policies" dialog (views/QuotaPoliciesWidget.js)
 *   user-quota-menus.js    its item in the user and collection pages' action menus (views/extendView.js)
 *   user-quota-upload.js   the upload dialog after a quota refusal (views/UploadWidget.js)
 *   user-quota-config.js   the plugin's configuration page for the default quotas (views/ConfigView.js, routes.js)
 * and user-quota.css (stylesheets/userQuota.styl). They meet under `girder.plugins.user_quota`.
 */
(function () {
  'use strict';
  const girder = window.girder;

  const ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

  /** Text for HTML content or a quoted attribute value (what pug's `#{}` and `attr=value` do). */
  function escape(value) {
    return String(value === null || value === undefined ? '' : value).replace(/[&<>"']/g, (c) => ENTITIES[c]);
  }

  const UNITS = ['bytes', 'kB', 'MB', 'GB', 'TB'];

  /** The `<option>`s of a size units menu (0-based powers of 1024), `selected` chosen. */
  function unitOptions(selected) {
    return UNITS.map(
      (name, power) => `<option value="${power}"${power === selected ? ' selected' : ''}>${name}</option>`
    ).join('');
  }

  /*
   * utilities/Conversions.js as Girder has it. sizeToValueAndUnits: a number of bytes as a value and units (powers of
   * 1024; 4096 → {sizeValue: 4, sizeUnits: 1}); a falsy size other than 0 is an empty value.
   */
  function sizeToValueAndUnits(sizeValue) {
    let sizeUnits = 0;
    if (sizeValue) {
      for (sizeUnits = 0; sizeUnits < 4 && parseInt(sizeValue / 1024, 10) * 1024 === sizeValue; sizeUnits += 1) {
        sizeValue /= 1024;
      }
    } else if (sizeValue !== 0) {
      sizeValue = '';
    }
    return { sizeUnits: sizeUnits, sizeValue: sizeValue };
  }

  /*
   * A value as typed and its units menu as a number of bytes. A suffix typed after the number (b, k, M, G, T) wins over
   * the menu; anything that is not a positive number goes to the server as typed (blank: no quota; the server
   * refuses the rest with its message).
   */
  function valueAndUnitsToSize(sizeValue, sizeUnits) {
    const suffixes = 'bkMGT';
    let sizeBytes = sizeValue;
    if (parseFloat(sizeValue) > 0) {
      sizeBytes = parseFloat(sizeValue);
      const match = sizeValue.match(new RegExp('^\\s*[0-9.]+\\s*([' + suffixes + '])', 'i'));
      if (match && match.length > 1) {
        for (sizeUnits = 0; sizeUnits < suffixes.length; sizeUnits += 1) {
          if (match[1].toLowerCase() === suffixes[sizeUnits].toLowerCase()) break;
        }
      }
      for (let i = 0; i < parseInt(sizeUnits, 10); i += 1) sizeBytes *= 1024;
      sizeBytes = parseInt(sizeBytes, 10);
    }
    return sizeBytes;
  }

  /*
   * What a refused request answered: the server's error document ({message, type, field?}), or, when the answer is no
   * such document (the server could not be reached, a proxy's error page), a message saying so. Girder's plugin reads
   * `responseJSON.message` as is, and then fails in its own error handler, leaving the form's button disabled.
   */
  function failureOf(xhr) {
    const body = xhr && xhr.responseJSON;
    if (body && typeof body === 'object' && typeof body.message === 'string') return body;
    const status = xhr && xhr.status ? `${xhr.status} ${xhr.statusText || ''}`.trim() : 'no answer';
    return { message: `The server could not be reached or did not answer as expected (${status}).` };
  }

  girder.plugins.user_quota = {
    escape: escape,
    failureOf: failureOf,
    unitOptions: unitOptions,
    sizeToValueAndUnits: sizeToValueAndUnits,
    valueAndUnitsToSize: valueAndUnitsToSize,
  };
})();
