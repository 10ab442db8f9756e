"""Record a real PyTorch profiler trace of a small two-branch model on CPU.

Run with Debian's torch (python3-torch 1.13.1):

    /usr/bin/python3 causal/testdata/recorders/gen_torch_trace.py causal/testdata/torch_cpu_trace.json
    gzip -9n causal/testdata/torch_cpu_trace.json

The model, scripted, has two branches that run concurrently through
torch.jit.fork (inter-op parallelism: a fork runs on a thread of the
inter-op pool) and join into a head: a
convolution branch, heavy, and a small linear branch, light, so one branch
is on the critical path and the other is not.

Debian's torch is built without Kineto (torch.autograd.kineto_available() is
False), so torch.profiler.profile records nothing (its export is "[]"); this
uses the profiler that build has, torch.autograd.profiler.profile
(use_kineto=False), whose export_chrome_trace writes the same Chrome trace
event JSON ("X" events with ts/dur in microseconds, tid per thread). Each of
the five recorded steps (after one of warm-up) runs inside
record_function("ProfilerStep#N"), the annotation torch.profiler's
prof.step() adds, so the importer sees iterations as it does in a Kineto
trace.
"""
import sys

import torch
import torch.nn as nn
from torch.autograd.profiler import profile, record_function


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1))
        self.lin = nn.Sequential(nn.Linear(64, 64), nn.ReLU())
        self.head = nn.Linear(16 + 64, 10)

    def branch_conv(self, x):
        return self.conv(x).mean(dim=(2, 3))

    def branch_lin(self, y):
        return self.lin(y)

    def forward(self, x, y):
        a = torch.jit.fork(self.branch_conv, x)
        b = torch.jit.fork(self.branch_lin, y)
        return self.head(torch.cat([torch.jit.wait(a), torch.jit.wait(b)], dim=1))


def main(out):
    torch.manual_seed(0)
    torch.set_num_threads(1)  # one intra-op thread per op
    torch.set_num_interop_threads(2)  # the pool the forks run on: one thread each
    net = torch.jit.script(Net().eval())  # scripted, so the forks run in parallel
    x = torch.randn(4, 8, 32, 32)
    y = torch.randn(4, 64)
    with torch.no_grad():
        net(x, y)  # warm-up, not recorded
        with profile(record_shapes=True, use_kineto=False) as prof:
            for step in range(5):
                with record_function("ProfilerStep#%d" % step):
                    net(x, y)
    prof.export_chrome_trace(out)
    print("torch", torch.__version__, "wrote", out)


if __name__ == "__main__":
    main(sys.argv[1])
