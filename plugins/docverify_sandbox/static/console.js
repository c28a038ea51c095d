// Minimal behaviour: dropdown menus, region auto-submit, conditional fields, polling of transient states.
document.addEventListener('click', function (ev) {
  var btn = ev.target.closest('[aria-haspopup="menu"]');
  if (btn) {
    var menu = btn.nextElementSibling;
    var open = btn.getAttribute('aria-expanded') === 'true';
    if (!btn.closest('[role=menu]')) {
      document.querySelectorAll('.menu > [aria-haspopup]').forEach(function (b) {
        if (b !== btn) { b.setAttribute('aria-expanded', 'false'); b.nextElementSibling.hidden = true; }
      });
    }
    btn.setAttribute('aria-expanded', open ? 'false' : 'true');
    menu.hidden = open;
    ev.preventDefault();
    return;
  }
  if (!ev.target.closest('[role=menu]')) {
    document.querySelectorAll('[aria-haspopup="menu"]').forEach(function (b) {
      b.setAttribute('aria-expanded', 'false'); b.nextElementSibling.hidden = true;
    });
  }
});
document.addEventListener('change', function (ev) {
  if (ev.target.matches('[data-autosubmit]')) { ev.target.form.submit(); }
  updateWhen();
});
function updateWhen() {
  document.querySelectorAll('[data-when]').forEach(function (el) {
    var form = el.closest('form'); if (!form) return;
    var cond = JSON.parse(el.getAttribute('data-when')); var ok = true;
    Object.keys(cond).forEach(function (k) {
      var inputs = form.querySelectorAll('[name="' + k + '"]'); var val = null;
      inputs.forEach(function (i) {
        if (i.type === 'radio') { if (i.checked) val = i.value; }
        else if (i.type === 'checkbox') { val = i.checked ? 'true' : 'false'; }
        else if (i.type !== 'hidden') { val = i.value; }
      });
      if (val !== null && String(val) !== String(cond[k])) ok = false;
    });
    el.hidden = !ok;
  });
}
// Rows on their way to another status (data-transient) are refreshed in place, as the
// real console re-renders them: the page is fetched again and only those rows are
// swapped, so a click elsewhere on the page is never lost to a reload. A row with an
// open menu or the focus waits for the next round; when rows appeared or went away,
// the whole page reloads, but never under an open dialog, menu or a field being typed in.
var POLL_MS = 1000;
function busy(scope) {
  return scope.querySelector('[aria-expanded="true"]') !== null ||
    (document.activeElement && document.activeElement !== document.body && scope.contains(document.activeElement));
}
function pollTransient() {
  if (!document.querySelector('tr[data-transient]')) return;
  setTimeout(function () {
    fetch(location.href, { credentials: 'same-origin', cache: 'no-store' })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (html === null) { pollTransient(); return; }
        var fresh = new DOMParser().parseFromString(html, 'text/html');
        var ids = function (root) {
          return Array.prototype.map.call(root.querySelectorAll('tr[data-id]'), function (r) { return r.dataset.id; }).join('\n');
        };
        if (ids(fresh) !== ids(document)) {
          if (!document.querySelector('[role=dialog]') && !busy(document)) { location.reload(); return; }
          pollTransient();
          return;
        }
        document.querySelectorAll('tr[data-transient]').forEach(function (row) {
          var next = fresh.querySelector('tr[data-id="' + CSS.escape(row.dataset.id) + '"]');
          if (next && next.outerHTML !== row.outerHTML && !busy(row)) { row.replaceWith(document.importNode(next, true)); }
        });
        pollTransient();
      })
      .catch(function () { pollTransient(); });
  }, POLL_MS);
}
document.addEventListener('DOMContentLoaded', function () {
  updateWhen();
  pollTransient();
});
