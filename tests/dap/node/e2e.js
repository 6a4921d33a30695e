// End-to-end: VS Code's own DebugClient (@vscode/debugadapter-testsupport)
// drives `gpudbg dap` over stdio through a whole session, as the editor
// would, then a post-mortem session on a GPU coredump.
//
// Environment (set by tests/dap/test_dap_e2e.py):
//   GPUDBG_BIN     the gpudbg executable (spawned as `GPUDBG_BIN dap`)
//   DAP_PROGRAM    the host program (dapscale_host.py)
//   DAP_KERNEL     its -G kernel source (dapscale.cu)
//   DAP_CORE       a coredump of a faulting kernel (gpudbg check --coredump-file)
'use strict';
const assert = require('assert');
const fs = require('fs');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const TIMEOUT = 180000;          // a slow, loaded CI machine compiles and simulates
const env = process.env;

function lineOf(file, marker) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(marker));
  assert.ok(i >= 0, `${marker} not in ${file}`);
  return i + 1;
}

function client() {
  const dc = new DebugClient(env.GPUDBG_BIN, 'dap', 'gpudbg', { env: process.env }, true);
  dc.defaultTimeout = TIMEOUT;
  return dc;
}

async function variablesOf(dc, frameId, scopeName) {
  const scopes = (await dc.scopesRequest({ frameId })).body.scopes;
  const scope = scopes.find((s) => s.name === scopeName);
  assert.ok(scope, `no ${scopeName} scope in ${JSON.stringify(scopes)}`);
  const vars = (await dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables;
  return { scope, vars, byName: Object.fromEntries(vars.map((v) => [v.name, v])) };
}

async function topFrame(dc, threadId) {
  const st = await dc.stackTraceRequest({ threadId });
  assert.ok(st.body.stackFrames.length >= 1, 'no stack frames');
  return st.body.stackFrames[0];
}

async function liveSession() {
  const dc = client();
  await dc.start();
  const output = [];
  dc.on('output', (e) => output.push(e.body));
  try {
    const breakLine = lineOf(env.DAP_KERNEL, 'BREAK');
    const afterLine = lineOf(env.DAP_KERNEL, 'AFTER');
    const exited = dc.waitForEvent('exited', TIMEOUT);
    const terminated = dc.waitForEvent('terminated', TIMEOUT);
    const stopped = dc.waitForEvent('stopped', TIMEOUT);
    await Promise.all([
      dc.waitForEvent('initialized').then(() => dc.setBreakpointsRequest({
        source: { path: env.DAP_KERNEL }, breakpoints: [{ line: breakLine }],
      })).then((r) => {
        assert.strictEqual(r.body.breakpoints.length, 1);
        assert.strictEqual(r.body.breakpoints[0].line, breakLine);
        return dc.configurationDoneRequest();
      }),
      dc.launch({ program: env.DAP_PROGRAM }),
    ]);

    // the breakpoint on the .cu line of the -G kernel
    const stop = await stopped;
    assert.strictEqual(stop.body.reason, 'breakpoint');
    const threads = (await dc.threadsRequest()).body.threads;
    assert.ok(threads.some((t) => t.id === stop.body.threadId), 'the stopped warp is in the thread list');
    const frame = await topFrame(dc, stop.body.threadId);
    assert.strictEqual(frame.line, breakLine);
    assert.strictEqual(frame.source.path, env.DAP_KERNEL);
    assert.match(frame.name, /^dapscale<<<\(2,1,1\),\(64,1,1\)>>>\(/);

    // lane A: block 0, thread 5
    const a = (await dc.customRequest('cuda/focus', { block: [0, 0, 0], thread: [5, 0, 0] })).body;
    assert.deepStrictEqual(a.focus.thread, [5, 0, 0]);
    const fa = await topFrame(dc, a.threadId);
    const la = await variablesOf(dc, fa.id, 'Locals');
    assert.strictEqual(la.byName.t.value, '5');
    assert.strictEqual(la.byName.v.value, '15');
    const ba = await variablesOf(dc, fa.id, 'Built-ins');
    assert.strictEqual(ba.byName.threadIdx.value, '{x = 5, y = 0, z = 0}');

    // lane B: block 1, thread 3 (global index 67), another warp
    const b = (await dc.customRequest('cuda/focus', { block: [1], thread: [3] })).body;
    assert.notStrictEqual(b.threadId, a.threadId);
    const fb = await topFrame(dc, b.threadId);
    const lb = await variablesOf(dc, fb.id, 'Locals');
    assert.strictEqual(lb.byName.t.value, '67');
    assert.strictEqual(lb.byName.v.value, '201');
    const regs = await variablesOf(dc, fb.id, 'Registers');
    assert.ok(regs.vars.some((v) => v.name.startsWith('%r')), 'PTX registers are listed');

    // set variable on lane B, read it back (variables and evaluate)
    const set = await dc.setVariableRequest({ variablesReference: lb.scope.variablesReference, name: 'v', value: '1000' });
    assert.strictEqual(set.body.value, '1000');
    const again = await variablesOf(dc, fb.id, 'Locals');
    assert.strictEqual(again.byName.v.value, '1000');
    const ev = await dc.evaluateRequest({ expression: 'v + 1', frameId: fb.id, context: 'watch' });
    assert.strictEqual(ev.body.result, '1001');

    // step lane B's warp over the line; w is computed from the new v
    const stepped = dc.waitForEvent('stopped', TIMEOUT);
    await dc.nextRequest({ threadId: b.threadId });
    const s2 = await stepped;
    assert.strictEqual(s2.body.reason, 'step');
    assert.strictEqual(s2.body.threadId, b.threadId);
    const f2 = await topFrame(dc, b.threadId);
    assert.strictEqual(f2.line, afterLine);
    const l2 = await variablesOf(dc, f2.id, 'Locals');
    assert.strictEqual(l2.byName.w.value, '1001');
    assert.strictEqual(l2.byName.t.value, '67');

    // continue to the end: the program sees the value we set
    await dc.continueRequest({ threadId: b.threadId });
    const ex = await exited;
    await terminated;
    assert.strictEqual(ex.body.exitCode, 0);
    const stdout = output.filter((o) => o.category === 'stdout').map((o) => o.output).join('');
    assert.ok(stdout.includes('out[5] = 16'), stdout);
    assert.ok(stdout.includes('out[67] = 1001'), stdout);
  } finally {
    await dc.stop();
  }
}

async function postMortem() {
  const dc = client();
  await dc.start();
  try {
    const stopped = dc.waitForEvent('stopped', TIMEOUT);
    await Promise.all([
      dc.configurationSequence(),
      dc.launch({ coreFile: env.DAP_CORE }),
    ]);
    const stop = await stopped;
    assert.strictEqual(stop.body.reason, 'exception');
    assert.match(stop.body.text, /Illegal Address/);
    const info = await dc.exceptionInfoRequest({ threadId: stop.body.threadId });
    assert.strictEqual(info.body.exceptionId, 'CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS');
    const frame = await topFrame(dc, stop.body.threadId);
    assert.match(frame.name, /^forward_difference<<</);
    assert.strictEqual(frame.line, 5);
    assert.strictEqual(frame.source.name, 'oob.cu');
    const locals = await variablesOf(dc, frame.id, 'Locals');
    // no -G: the kernel's PTX parameters, decoded from the launch's buffer (n is the third)
    assert.ok(locals.byName.param_2, `the kernel's parameters: ${JSON.stringify(locals.vars)}`);
    assert.strictEqual(locals.byName.param_2.value, '1000');
    const builtins = await variablesOf(dc, frame.id, 'Built-ins');
    assert.strictEqual(builtins.byName.threadIdx.value, '{x = 103, y = 0, z = 0}');
    assert.strictEqual(builtins.byName.blockIdx.value, '{x = 7, y = 0, z = 0}');
    const src = await dc.sourceRequest({ sourceReference: frame.source.sourceReference, source: frame.source });
    assert.ok(src.body.content.includes('out[i] = in[i + 1] - in[i];'));
    const cont = await dc.continueRequest({ threadId: stop.body.threadId }).then(() => 'ran', (e) => e.message);
    assert.match(cont, /coredump/);
  } finally {
    await dc.stop();
  }
}

async function overTcp() {
  // `gpudbg dap --port 0 --token T` prints where it listens; the client brings the token
  const cp = require('child_process');
  const server = cp.spawn(env.GPUDBG_BIN, ['dap', '--port', '0', '--token', 'e2e-token'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await new Promise((resolve, reject) => {
    let text = '';
    server.stderr.on('data', (d) => {
      text += d.toString();
      const m = /listening on 127\.0\.0\.1:(\d+) \(token e2e-token\)/.exec(text);
      if (m) resolve(Number(m[1]));
    });
    server.on('exit', (code) => reject(new Error(`gpudbg dap --port exited (${code}): ${text}`)));
  });
  const dc = new DebugClient('unused', 'unused', 'gpudbg');
  await dc.start(port);
  const output = [];
  dc.on('output', (e) => output.push(e.body));
  try {
    const exited = dc.waitForEvent('exited');
    await Promise.all([dc.configurationSequence(), dc.launch({ program: env.DAP_PROGRAM, token: 'e2e-token' })]);
    assert.strictEqual((await exited).body.exitCode, 0);
    const stdout = output.filter((o) => o.category === 'stdout').map((o) => o.output).join('');
    assert.ok(stdout.includes('out[67] = 202'), stdout);
  } finally {
    await dc.stop();
    await new Promise((resolve) => (server.exitCode !== null ? resolve() : server.on('exit', resolve)));
  }
}

(async () => {
  for (const [name, fn] of [['live session', liveSession], ['post-mortem', postMortem], ['over TCP', overTcp]]) {
    const t0 = Date.now();
    await fn();
    console.log(`ok - ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  }
})().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
