// A small pipeline: two CPU-bound branches (worker threads) joined by the main thread.
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');
function work(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i); return s; }
if (isMainThread) {
  const branch = (n) => new Promise((ok) => { const w = new Worker(__filename, { workerData: n }); w.on('message', ok); });
  Promise.all([branch(3e7), branch(1e7)]).then((r) => console.log('joined', work(5e6) + r[0] + r[1]));
} else {
  parentPort.postMessage(work(workerData));
}
