/*
 * user_quota plugin (see user-quota-common.js): after a quota refusal the upload dialog shows its drop zone again, so
 * smaller files can be chosen (views/UploadWidget.js); the refusal's message itself is the dialog's own error line.
 * Girder's script looks for the identifier `user_quota.upload-exceeds-quota`, but the plugin's server part refuses
 * with a plain ValidationException (no identifier; this service answers as Girder does), so the refusal is known by
 * its message: "Upload would exceed file storage quota …" at the start, "Upload exceeded …" at completion.
 */
(function () {
  'use strict';
  const girder = window.girder;
  const QUOTA_REFUSAL = /^Error: Upload (would exceed|exceeded) file storage quota/;

  const isQuotaRefusal = (info) =>
    info.identifier === 'user_quota.upload-exceeds-quota' || QUOTA_REFUSAL.test(info.message || '');

  girder.utilities.PluginUtils.wrap(girder.views.widgets.UploadWidget, 'uploadNextFile', function (uploadNextFile) {
    this.$('.g-drop-zone').addClass('hide');
    uploadNextFile.call(this);
    const showDropZone = function (info) {
      if (isQuotaRefusal(info)) this.$('.g-drop-zone').removeClass('hide');
    };
    // Past the last file no new upload started (currentFile is still the finished one).
    if (this.currentIndex < this.files.length) {
      this.currentFile.on('g:upload.error', showDropZone, this).on('g:upload.errorStarting', showDropZone, this);
    }
  });
})();
