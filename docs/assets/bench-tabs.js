// Machine tabs (benchsite/templates/tabs.html): an address whose #fragment names a tab's input
// opens that tab and scrolls to it; choosing a tab puts its id in the address bar, so the address
// links what the reader sees. Without JavaScript the first tab shows and the labels still switch.
(function () {
  function openFromHash() {
    var id = decodeURIComponent(location.hash.slice(1));
    if (!id) return;
    var input = document.getElementById(id);
    if (!input || !input.classList.contains("bench-tab-input")) return;
    input.checked = true;
    var set = input.closest(".bench-tabs");
    if (set) set.scrollIntoView({block: "start"});
  }
  document.addEventListener("change", function (event) {
    var input = event.target;
    if (input.classList && input.classList.contains("bench-tab-input")) {
      history.replaceState(null, "", "#" + encodeURIComponent(input.id));
    }
  });
  window.addEventListener("hashchange", openFromHash);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", openFromHash);
  } else {
    openFromHash();
  }
})();
