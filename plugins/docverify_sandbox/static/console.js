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
document.addEventListener('DOMContentLoaded', function () {
  updateWhen();
  if (document.querySelector('[data-transient]') && !document.querySelector('[role=dialog]')) {
    setTimeout(function () { location.reload(); }, 1000);
  }
});
