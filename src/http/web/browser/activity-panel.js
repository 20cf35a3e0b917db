/*
 * Activity panel for the Girder web client (served by this service and listed in /system/plugin_static_files, so
 * the client loads it before it starts). Under every folder listing whose folder the user administers, it shows
 * the folder's audit history (who, what, when: GET /folder/:id/history), adds new entries live from the folder's
 * event stream (GET /folder/:id/events, server-sent events), and has a "view as of" control that lists the
 * folder's subfolders as they were at an earlier time (GET /folder?parentType=folder&parentId=…&at=…).
 * Plain browser JavaScript: no build step, only the `girder` global the page defines.
 */
(function () {
  'use strict';
  var girder = window.girder;
  var API = '/api/v1/';
  var SHOWN = 20;
  var current = null; // { folderId, abort: AbortController, el }

  function token() {
    return girder.auth.getCurrentToken();
  }

  function request(path) {
    return fetch(API + path, { headers: { 'Girder-Token': token() } }).then(function (response) {
      return response.json().then(function (body) {
        if (!response.ok) throw new Error(body.message || response.statusText);
        return body;
      });
    });
  }

  function text(tag, className, content) {
    var el = document.createElement(tag);
    if (className) el.className = className;
    if (content !== undefined) el.textContent = content;
    return el;
  }

  /** One history entry as a row: who, what, when. */
  function entryRow(entry) {
    var row = text('li', 'fs-activity-entry');
    row.setAttribute('data-position', entry.position);
    row.appendChild(text('span', 'fs-activity-who', entry.login || (entry.userId ? entry.userId : 'system')));
    row.appendChild(
      text(
        'span',
        'fs-activity-what',
        ' ' + entry.type + (entry.data && entry.data.via ? ' (' + entry.data.via.operation + ')' : '')
      )
    );
    row.appendChild(text('span', 'fs-activity-when', ' ' + new Date(entry.at).toLocaleString()));
    return row;
  }

  function addEntry(list, entry) {
    if (list.querySelector('[data-position="' + entry.position + '"]')) return;
    list.insertBefore(entryRow(entry), list.firstChild);
    while (list.children.length > SHOWN) list.removeChild(list.lastChild);
  }

  /** Reads the folder's event stream (fetch, so the token goes in a header) and hands each event to `onEvent`. */
  function follow(folderId, since, abort, onEvent) {
    var url = API + 'folder/' + folderId + '/events' + (since ? '?since=' + since : '');
    fetch(url, { headers: { 'Girder-Token': token() }, signal: abort.signal })
      .then(function (response) {
        if (!response.ok || !response.body) return;
        var reader = response.body.getReader();
        var decoder = new TextDecoder();
        var buffered = '';
        function pump() {
          return reader.read().then(function (chunk) {
            if (chunk.done) return;
            buffered += decoder.decode(chunk.value, { stream: true });
            var messages = buffered.split('\n\n');
            buffered = messages.pop();
            messages.forEach(function (message) {
              var data = message
                .split('\n')
                .filter(function (line) {
                  return line.indexOf('data:') === 0;
                })
                .map(function (line) {
                  return line.slice(5).trim();
                })
                .join('\n');
              if (data) onEvent(JSON.parse(data));
            });
            return pump();
          });
        }
        return pump();
      })
      .catch(function () {
        /* aborted when the folder view goes away */
      });
  }

  function asOfControl(folderId) {
    var box = text('div', 'fs-activity-asof');
    box.appendChild(text('label', null, 'View as of '));
    var input = text('input', 'fs-activity-asof-input form-control input-sm');
    input.type = 'datetime-local';
    input.step = '1';
    var show = text('button', 'fs-activity-asof-show btn btn-sm btn-default', 'Show');
    var listing = text('ul', 'fs-activity-asof-list');
    show.addEventListener('click', function () {
      if (!input.value) return;
      var at = new Date(input.value).toISOString();
      request('folder?parentType=folder&parentId=' + folderId + '&at=' + encodeURIComponent(at) + '&limit=0')
        .then(function (folders) {
          listing.textContent = '';
          listing.appendChild(
            text('li', 'fs-activity-asof-title', 'Subfolders at ' + new Date(at).toLocaleString() + ':')
          );
          folders.forEach(function (folder) {
            listing.appendChild(text('li', 'fs-activity-asof-folder', folder.name));
          });
          if (!folders.length) listing.appendChild(text('li', 'fs-activity-asof-empty', '(none)'));
        })
        .catch(function (error) {
          listing.textContent = error.message;
        });
    });
    box.appendChild(input);
    box.appendChild(show);
    box.appendChild(listing);
    return box;
  }

  function stop() {
    if (!current) return;
    current.abort.abort();
    if (current.el.parentNode) current.el.parentNode.removeChild(current.el);
    current = null;
  }

  function attach(widget) {
    var folder = widget.parentModel;
    if (
      !folder ||
      folder.resourceName !== 'folder' ||
      !folder.id ||
      folder.getAccessLevel() < girder.constants.AccessType.ADMIN
    ) {
      stop();
      return;
    }
    if (current && current.folderId === folder.id && document.body.contains(current.el)) return;
    stop();
    var panel = text('div', 'fs-activity-panel');
    panel.appendChild(text('div', 'fs-activity-title g-widget-metadata-header', 'Activity'));
    var list = text('ul', 'fs-activity-list');
    panel.appendChild(list);
    panel.appendChild(asOfControl(folder.id));
    widget.el.appendChild(panel);
    var abort = new AbortController();
    current = { folderId: folder.id, abort: abort, el: panel };
    request('folder/' + folder.id + '/history?limit=0')
      .then(function (entries) {
        entries.slice(-SHOWN).forEach(function (entry) {
          addEntry(list, entry);
        });
        var last = entries.length ? entries[entries.length - 1].position : null;
        follow(folder.id, last, abort, function (entry) {
          addEntry(list, entry);
        });
      })
      .catch(function (error) {
        list.appendChild(text('li', 'fs-activity-error', error.message));
      });
  }

  var Widget = girder.views.widgets.HierarchyWidget;
  var render = Widget.prototype.render;
  Widget.prototype.render = function () {
    var result = render.apply(this, arguments);
    attach(this);
    return result;
  };
  girder.events.on('g:navigateTo', function () {
    if (current && !document.body.contains(current.el)) stop();
  });
})();
