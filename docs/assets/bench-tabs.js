// Machine tabs (benchsite/templates/tabs.html): an address whose #fragment names a tab's input
// (<figure id>--<machine>) opens that tab and scrolls to the figure's heading where the page has
// one (a chapter: its title and caption say what was measured), else to the tabs, in both cases
// below the theme's sticky header; choosing a tab puts its id in the address bar, so the address
// links what the reader sees. Without JavaScript the first tab shows and the labels still switch.
(function () {
  function tabOfHash() {
    var id = decodeURIComponent(location.hash.slice(1));
    var input = id ? document.getElementById(id) : null;
    return input && input.classList.contains("bench-tab-input") ? input : null;
  }
  function place(input) {
    var heading = document.getElementById(input.id.split("--")[0]);
    var target = heading && /^H[1-6]$/.test(heading.tagName) ? heading : input.closest(".bench-tabs");
    if (!target) return;
    var header = document.querySelector(".md-header");
    var below = header ? Math.max(header.getBoundingClientRect().bottom, 0) : 0;
    window.scrollTo(0, window.scrollY + target.getBoundingClientRect().top - below - 8);
  }
  function openFromHash() {
    var input = tabOfHash();
    if (!input) return;
    input.checked = true;
    place(input);
  }
  document.addEventListener("change", function (event) {
    var input = event.target;
    if (input.classList && input.classList.contains("bench-tab-input")) {
      history.replaceState(null, "", "#" + encodeURIComponent(input.id));
    }
  });
  window.addEventListener("hashchange", openFromHash);
  // The browser scrolls to the fragment's element (the tab's input) once the page has loaded:
  // placed again after that, so the reader starts at the figure's title.
  window.addEventListener("load", function () {
    var input = tabOfHash();
    if (!input) return;
    window.requestAnimationFrame(function () {
      place(input);
      // That scroll went up: the theme's "Back to top" button would cover the title. A last pixel
      // down tells it the reader is reading on.
      window.requestAnimationFrame(function () { window.scrollBy(0, 1); });
    });
  });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", openFromHash);
  } else {
    openFromHash();
  }
})();
