// The explorers' static twin (specdec_course.explorers): every state was computed by specdec_lib when the
// book was built and sits in the explorer's JSON; this script only looks states up and computes nothing.
// The result updates inside the explorer's live region (.specdec-result), so screen readers announce it.
function specdecExplorer(root) {
  var data = JSON.parse(root.querySelector("script.specdec-states").textContent);
  var controls = Array.prototype.slice.call(root.querySelectorAll("[data-control]"));
  var display = root.querySelector(".specdec-display"), invalid = root.querySelector(".specdec-explorer-invalid");
  function each(selector, f) { Array.prototype.forEach.call(root.querySelectorAll(selector), f); }
  function show() {
    controls.forEach(function (c) {
      var shown = root.querySelector('[data-value-of="' + c.dataset.control + '"]');
      var text = data.labels[c.dataset.control][c.value];
      if (shown) shown.textContent = text;
      if (c.type === "range") c.setAttribute("aria-valuetext", text);  // screen readers say "0.3", not the index
    });
    var state = data.states[controls.map(function (c) { return c.value; }).join("-")];
    display.hidden = !state; invalid.hidden = !!state;
    if (!state) return;
    each("[data-field]", function (el) { el.textContent = state[0][data.fields.indexOf(el.dataset.field)]; });
    each("[data-bar]", function (el) { el.style.width = state[1][data.bars.indexOf(el.dataset.bar)] + "%"; });
    each("[data-row]", function (el) { el.hidden = state[2].indexOf(el.dataset.row) >= 0; });
  }
  controls.forEach(function (c) { c.addEventListener("input", show); c.addEventListener("change", show); });
  show();
}
document.addEventListener("DOMContentLoaded", function () {
  Array.prototype.forEach.call(document.querySelectorAll("[data-explorer]"), specdecExplorer);
});
