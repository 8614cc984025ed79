// The controls of the in-page stories260K (fromscratch.viz.in_browser): a prompt, a temperature, a
// button to generate, and one to check the greedy story from BOS against llama2.c's reference.
(function (root) {
  if (!root || root.dataset.ready) return; // a notebook may run an output's script twice
  root.dataset.ready = "1";
  const L = globalThis.Llama2c, $ = (name) => root.querySelector(".fs-llama-" + name);
  const bytes = (name) => { // a base64 <script> of the page -> an ArrayBuffer
    return Uint8Array.from(atob($(name).textContent.trim()), (c) => c.charCodeAt(0)).buffer;
  };
  const model = L.readModel(bytes("model")), tok = L.readTokenizer(bytes("tokenizer"));
  const reference = JSON.parse($("reference").textContent);
  const output = $("output"), status = $("status"), temperature = $("temperature");
  const shown = temperature.nextElementSibling; // the <output> beside the slider
  temperature.addEventListener("input", () => { shown.textContent = temperature.value; });
  let running = null; // the generation in progress, stopped by the next click

  async function run(ids, steps, options) {
    const mine = (running = {}); // a click during a run starts over
    const start = performance.now();
    const out = await L.generate(model, tok, ids, steps, {
      ...options,
      onToken: async (sofar) => {
        output.textContent = L.decode(tok, sofar);
        await new Promise((resolve) => setTimeout(resolve, 0)); // let the page draw the new token
        return running === mine;
      },
    });
    const seconds = (performance.now() - start) / 1000, made = out.length - ids.length;
    const rate = (made / seconds).toFixed(0);
    status.textContent = `${made} tokens in ${seconds.toFixed(2)} s (${rate} tokens/s)`;
    return out;
  }

  $("generate").addEventListener("click", () => {
    root.dataset.state = "running";
    const options = { temperature: Number(temperature.value), topP: 0.9, seed: Number($("seed").value) };
    const prompt = L.encode(tok, $("prompt").value);
    run(prompt, Number($("steps").value), { ...options, stopAtBos: true }).then(() => {
      root.dataset.state = "done";
    });
  });

  $("check").addEventListener("click", async () => {
    root.dataset.state = "running";
    const story = L.decode(tok, await run([L.BOS], reference.steps, { temperature: 0 }));
    let at = 0;
    while (at < story.length && story[at] === reference.text[at]) at++;
    const same = story === reference.text;
    root.dataset.check = same ? "same" : "different";
    status.textContent += same
      ? ` \u2713 identical to llama2.c's reference story, all ${story.length} characters`
      : ` \u2717 differs from llama2.c's reference at character ${at}`;
    root.dataset.state = "done";
  });
  root.dataset.state = "ready";
})(document.getElementById("LLAMA_ID"));
