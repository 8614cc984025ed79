// stories260K in the reader's browser: llama2.c's Llama, written again in plain JavaScript (chapter 14).
//
// Read it beside the Python: fromscratch/interop/llama2c.py reads the same file (read_llama2c),
// fromscratch/models/llama.py is the same model, tokenizers/sentencepiece.py the same tokeniser and
// the notebook's `sample` the same sampling. One token at a time, as llama2.c's run.c does: the
// KV cache keeps every earlier position's keys and values, so each step computes only the new one.
// Numbers are float32 arrays; sums are taken in JavaScript's float64, then stored as float32.
// Shapes: e embedding, h query heads, hk key/value heads, s = e / h, L blocks, V vocabulary.
(function (exports) {
  "use strict";

  // --- the weights: llama2.c's version-0 file --------------------------------------------------
  // A header of 7 int32, then float32 tensors, each (out, in) row by row like nn.Linear.weight.
  function readModel(buffer) {
    const header = new Int32Array(buffer, 0, 7);
    const [e, hidden, L, h, hk, vocab, context] = header;
    const V = Math.abs(vocab), s = e / h;
    const c = { e, hidden, L, h, hk, V, context, s, tied: vocab > 0 };
    let at = 28; // bytes read so far
    const take = (n) => { const t = new Float32Array(buffer, at, n); at += 4 * n; return t; };
    const w = {
      embedding: take(V * e),          // (V, e)
      rmsAtt: take(L * e),             // (L, e)
      wq: take(L * h * s * e),         // (L, h·s, e)
      wk: take(L * hk * s * e),        // (L, hk·s, e)
      wv: take(L * hk * s * e),        // (L, hk·s, e)
      wo: take(L * e * h * s),         // (L, e, h·s)
      rmsFfn: take(L * e),             // (L, e)
      w1: take(L * hidden * e),        // (L, hidden, e): SwiGLU's gate
      w2: take(L * e * hidden),        // (L, e, hidden): down
      w3: take(L * hidden * e),        // (L, hidden, e): up
      rmsFinal: take(e),               // (e,)
    };
    at += 4 * context * s; // llama2.c's RoPE table (seq_len, s): we compute the angles instead
    w.output = c.tied ? w.embedding : take(V * e); // (V, e)
    if (at !== buffer.byteLength) throw new Error(`expected ${at} bytes, got ${buffer.byteLength}`);
    return { config: c, weights: w };
  }

  // --- the building blocks ---------------------------------------------------------------------
  function matmul(out, x, W, offset, n) { // out (d,) = W (d, n) @ x (n,), W starting at W[offset]
    for (let i = 0; i < out.length; i++) {
      let sum = 0;
      const row = offset + i * n;
      for (let j = 0; j < n; j++) sum += W[row + j] * x[j];
      out[i] = sum;
    }
  }

  function rmsnorm(out, x, gain, offset) { // x / sqrt(mean(x²) + 1e-5) * gain
    let ss = 0;
    for (let i = 0; i < x.length; i++) ss += x[i] * x[i];
    const scale = 1 / Math.sqrt(ss / x.length + 1e-5);
    for (let i = 0; i < x.length; i++) out[i] = gain[offset + i] * (scale * x[i]);
  }

  function rotate(v, heads, s, pos) { // RoPE: pair (2m, 2m+1) of each head turns by pos·10000^(-2m/s)
    for (let head = 0; head < heads; head++) {
      for (let m = 0; m < s / 2; m++) {
        const angle = pos * Math.pow(10000, -2 * m / s);
        const cos = Math.cos(angle), sin = Math.sin(angle);
        const i = head * s + 2 * m, a = v[i], b = v[i + 1];
        v[i] = a * cos - b * sin;
        v[i + 1] = a * sin + b * cos;
      }
    }
  }

  function softmax(x, n) { // in place over x[0..n)
    let max = -Infinity, sum = 0;
    for (let i = 0; i < n; i++) max = Math.max(max, x[i]);
    for (let i = 0; i < n; i++) { x[i] = Math.exp(x[i] - max); sum += x[i]; }
    for (let i = 0; i < n; i++) x[i] /= sum;
  }

  // --- the model: one position at a time, with a KV cache -----------------------------------------
  function newCache(model) { // keys and values of every block: (L, context, hk·s) each
    const c = model.config, size = c.L * c.context * c.hk * c.s;
    return { keys: new Float32Array(size), values: new Float32Array(size), length: 0 };
  }

  function forward(model, cache, token) { // the logits (V,) of the token after `token`
    const c = model.config, w = model.weights, { e, h, hk, s, hidden } = c;
    const pos = cache.length, kvDim = hk * s, group = h / hk; // query heads per key/value head
    const x = w.embedding.slice(token * e, (token + 1) * e); // (e,): the residual stream
    const xb = new Float32Array(e), q = new Float32Array(h * s), att = new Float32Array(h * s);
    const k = new Float32Array(kvDim), v = new Float32Array(kvDim), out = new Float32Array(e);
    const gate = new Float32Array(hidden), up = new Float32Array(hidden);
    const scores = new Float32Array(pos + 1);
    for (let l = 0; l < c.L; l++) {
      // attention: pre-norm, project, rotate, remember, attend
      rmsnorm(xb, x, w.rmsAtt, l * e);
      matmul(q, xb, w.wq, l * h * s * e, e);  // (h·s,)
      matmul(k, xb, w.wk, l * kvDim * e, e);  // (hk·s,)
      matmul(v, xb, w.wv, l * kvDim * e, e);  // (hk·s,)
      rotate(q, h, s, pos);
      rotate(k, hk, s, pos);
      const base = l * c.context * kvDim; // this block's part of the cache
      cache.keys.set(k, base + pos * kvDim);
      cache.values.set(v, base + pos * kvDim);
      for (let head = 0; head < h; head++) {
        const kvHead = Math.floor(head / group); // grouped-query attention: neighbours share
        for (let t = 0; t <= pos; t++) { // causal: the keys up to this position
          let dot = 0;
          const key = base + t * kvDim + kvHead * s; // where key t of this head starts
          for (let i = 0; i < s; i++) dot += q[head * s + i] * cache.keys[key + i];
          scores[t] = dot / Math.sqrt(s);
        }
        softmax(scores, pos + 1);
        for (let i = 0; i < s; i++) {
          let sum = 0;
          for (let t = 0; t <= pos; t++) sum += scores[t] * cache.values[base + t * kvDim + kvHead * s + i];
          att[head * s + i] = sum;
        }
      }
      matmul(out, att, w.wo, l * e * h * s, h * s);
      for (let i = 0; i < e; i++) x[i] += out[i]; // residual
      // feed-forward: pre-norm, SwiGLU = down(silu(gate(x)) * up(x))
      rmsnorm(xb, x, w.rmsFfn, l * e);
      matmul(gate, xb, w.w1, l * hidden * e, e);
      matmul(up, xb, w.w3, l * hidden * e, e);
      for (let i = 0; i < hidden; i++) gate[i] = (gate[i] / (1 + Math.exp(-gate[i]))) * up[i];
      matmul(out, gate, w.w2, l * e * hidden, hidden);
      for (let i = 0; i < e; i++) x[i] += out[i]; // residual
    }
    cache.length = pos + 1;
    rmsnorm(xb, x, w.rmsFinal, 0);
    const logits = new Float32Array(c.V);
    matmul(logits, xb, w.output, 0, e); // tied: the token embedding scores the next token
    return logits;
  }

  // --- the tokeniser: sentencepiece BPE, from llama2.c's tokenizer.bin -------------------------------
  const UNK = 0, BOS = 1, EOS = 2, SPACE = "\u2581";
  function readTokenizer(buffer) { // int32 longest; per token: float32 score, int32 length, UTF-8 bytes
    const view = new DataView(buffer), utf8 = new TextDecoder();
    const pieces = [], scores = [];
    for (let at = 4; at < buffer.byteLength;) {
      const score = view.getFloat32(at, true), length = view.getInt32(at + 4, true);
      const piece = utf8.decode(new Uint8Array(buffer, at + 8, length));
      const special = pieces.length === BOS || pieces.length === EOS; // written "\n<s>\n", "\n</s>\n"
      pieces.push(special ? piece.trim() : piece.replaceAll(" ", SPACE));
      scores.push(score);
      at += 8 + length;
    }
    const byteId = new Map(), pieceId = new Map();
    pieces.forEach((piece, i) => {
      const byte = /^<0x([0-9A-F]{2})>$/.exec(piece);
      if (byte && i >= 3) byteId.set(parseInt(byte[1], 16), i);
    });
    pieces.forEach((piece, i) => {
      if (i > EOS && ![...byteId.values()].includes(i)) pieceId.set(piece, i); // normal pieces only
    });
    return { pieces, scores, byteId, pieceId };
  }

  function encode(tok, text, bos = true) { // merge the best-scoring neighbours until none joins
    const words = text.split(" ").filter((w) => w);
    const normal = words.length ? (SPACE + words.join(SPACE)).replace(/\u2581+$/, "") : "";
    const symbols = Array.from(normal); // one symbol per Unicode character
    for (;;) {
      let best = null, where = -1;
      for (let i = 0; i + 1 < symbols.length; i++) {
        const id = tok.pieceId.get(symbols[i] + symbols[i + 1]);
        if (id === undefined || (best !== null && tok.scores[id] <= best)) continue; // leftmost wins ties
        best = tok.scores[id];
        where = i;
      }
      if (where < 0) break;
      symbols.splice(where, 2, symbols[where] + symbols[where + 1]);
    }
    const ids = bos ? [BOS] : [];
    for (const symbol of symbols) {
      if (tok.pieceId.has(symbol)) ids.push(tok.pieceId.get(symbol));
      else for (const byte of new TextEncoder().encode(symbol)) ids.push(tok.byteId.get(byte)); // bytes
    }
    return ids;
  }

  function decode(tok, ids) { // pieces joined, byte tokens as bytes, the dummy prefix's space dropped
    const bytes = [], utf8 = new TextEncoder();
    let atStart = true;
    for (const id of ids) {
      if (id === BOS || id === EOS) continue;
      const byte = id >= 3 ? /^<0x([0-9A-F]{2})>$/.exec(tok.pieces[id]) : null;
      if (byte) bytes.push(parseInt(byte[1], 16));
      else {
        let piece = id === UNK ? " \u2047 " : tok.pieces[id];
        if (atStart && piece.startsWith(SPACE)) piece = piece.slice(1);
        bytes.push(...utf8.encode(piece.replaceAll(SPACE, " ")));
      }
      atStart = atStart && bytes.length === 0;
    }
    return new TextDecoder().decode(new Uint8Array(bytes)); // a bad byte becomes U+FFFD
  }

  // --- sampling --------------------------------------------------------------------------------------
  function rng(seed) { // xorshift*, llama2.c's random_u32: the same seed, the same draws
    let state = BigInt(seed || 1) & 0xffffffffffffffffn; // xorshift stays at 0 from 0
    return () => {
      state ^= state >> 12n; state ^= (state << 25n) & 0xffffffffffffffffn; state ^= state >> 27n;
      const u32 = Number(((state * 0x2545f4914f6cdd1dn) & 0xffffffffffffffffn) >> 32n);
      return (u32 >>> 8) / 16777216; // a float in [0, 1)
    };
  }

  function sample(logits, temperature, topP, random) { // greedy at temperature 0
    let best = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
    if (temperature === 0) return best;
    const probs = Float32Array.from(logits, (z) => z / temperature);
    softmax(probs, probs.length);
    const order = Array.from(probs.keys()).sort((a, b) => probs[b] - probs[a]);
    let kept = 0, mass = 0; // the nucleus: every token whose mass before it is < topP
    while (kept < order.length && mass < topP) mass += probs[order[kept++]];
    let r = random() * mass;
    for (let i = 0; i < kept; i++) { r -= probs[order[i]]; if (r <= 0) return order[i]; }
    return order[kept - 1];
  }

  async function generate(model, tok, ids, steps, options = {}) { // continue `ids` by up to `steps` tokens
    const { temperature = 0, topP = 0.9, seed = 1, stopAtBos = false, onToken = null } = options;
    const cache = newCache(model), random = rng(seed), out = [...ids];
    let logits = null;
    for (const id of ids) logits = forward(model, cache, id); // the prompt fills the cache
    for (let n = 0; n < steps && out.length < model.config.context; n++) {
      const next = sample(logits, temperature, topP, random);
      if (stopAtBos && next === BOS) break; // a story ends where a new one begins
      out.push(next);
      if (onToken && (await onToken(out)) === false) break;
      if (n + 1 < steps) logits = forward(model, cache, next);
    }
    return out;
  }

  Object.assign(exports, { BOS, EOS, readModel, readTokenizer, encode, decode, newCache, forward });
  Object.assign(exports, { sample, generate });
})(typeof module === "object" && module.exports ? module.exports : (globalThis.Llama2c = {}));
