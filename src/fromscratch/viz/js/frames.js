// Precomputed interaction (fromscratch.viz.precomputed): show the frame that the sliders point at.
// Python drew every frame when the chapter ran; this script only swaps them, so the figure works
// without a kernel and without a network: in Jupyter, Colab, the built book and the slide decks.
(function (root) {
  if (!root || root.dataset.ready) return; // a notebook may run an output's script twice
  root.dataset.ready = "1";
  const data = JSON.parse(root.querySelector("script.fs-data").textContent);
  const sliders = Array.from(root.querySelectorAll("input.fs-control"));
  const view = root.querySelector(".fs-frame");
  function show() {
    let index = 0; // the frames are stored in row-major order of the controls
    sliders.forEach((slider, c) => {
      index = index * data.sizes[c] + Number(slider.value);
      slider.parentElement.querySelector("output").textContent = data.labels[c][slider.value];
    });
    view.innerHTML = data.frames[data.order[index]];
    root.dataset.frame = index;
  }
  function typeset() { // the new frame's formulas: MathJax 3 in the book and the decks, if it is there
    const mj = window.MathJax;
    if (mj && mj.typesetPromise && view.querySelector(".math")) mj.typesetPromise([view]).catch(() => {});
  }
  sliders.forEach((slider) => slider.addEventListener("input", () => { show(); typeset(); }));
  const play = root.querySelector("button.fs-play"); // optional: step the first control in a loop
  let timer = null;
  if (play) play.addEventListener("click", () => {
    if (timer) { clearInterval(timer); timer = null; play.textContent = "\u25B6"; return; }
    play.textContent = "\u275A\u275A";
    timer = setInterval(() => {
      sliders[0].value = (Number(sliders[0].value) + 1) % data.sizes[0];
      show();
      typeset();
    }, Number(play.dataset.interval));
  });
  show();
})(document.getElementById("FRAMES_ID"));
