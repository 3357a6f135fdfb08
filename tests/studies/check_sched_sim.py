#!/usr/bin/python3
"""Self-check of benchmarks/sched_sim.py (the scheduling simulator) against closed forms:
  check_sched_sim.py [path/to/sched_sim.py]
Exits non-zero on a failure. Takes a few seconds."""
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sim_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "benchmarks",
                                                               "sched_sim.py")
sys.path.insert(0, os.path.dirname(os.path.abspath(sim_path)))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import sched_sim as S  # noqa: E402

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def zero(**kw):
    """no latency, no service time, no I/O, no collectives"""
    base = dict(L=0.0, s=0.0, L0=0.0, Ln=0.0, sn=0.0, journal=0.0, merge=0.0, close=0.0,
                startup=0.0, writer="none", count_done="none", coll_level=0.0, polite=0.0)
    base.update(kw)
    return S.Model(**base)


# C's mbs_scheduler_next (studies/scheduler.c), transcribed independently of sched_sim.py:
#   long c = (end - seen) / (4 * nworkers); if (c < 1) c = 1; if (c > 64) c = 64;
# with C's division truncating toward zero
def c_guided(end, seen, nworkers):
    num, den = end - seen, 4 * nworkers
    q = abs(num) // den
    c = q if num >= 0 else -q
    return max(1, min(64, c))


def runs(seq):
    """[64, 64, 64, 20, 1, 1] as '64x3 20 1x2'"""
    out, i = [], 0
    while i < len(seq):
        j = i
        while j < len(seq) and seq[j] == seq[i]:
            j += 1
        out.append("%dx%d" % (seq[i], j - i) if j - i > 1 else str(seq[i]))
        i = j
    return " ".join(out)


t_start = time.time()

# 1. equal sample times t, N samples, W = P x T workers, no latency: static (contiguous and
#    round-robin) and dynamic chunks of 1 end at ceil(N / W) t
t = 0.25
for N, P, T in [(1000, 7, 1), (1000, 8, 2), (37, 64, 1), (4096, 16, 4), (5, 2, 3)]:
    work = np.full(N, t)
    for pol in ["static", "roundrobin", "dynamic:1"]:
        r = S.simulate(work, [N], P, T, S.parse_policy(pol), zero(), check=True)
        want = math.ceil(N / (P * T)) * t
        check(abs(r["wall"] - want) < 1e-9,
              "%s N=%d P=%d T=%d: wall %.6g = ceil(N/W) t = %.6g" % (pol, N, P, T, r["wall"], want))
    # dynamic chunks of k: ceil(N / k) chunks of k t (the last shorter) dealt one by one
    k = 8
    r = S.simulate(work, [N], P, T, ("dynamic", k), zero(), check=True)
    nch = math.ceil(N / k)
    full = N // k
    rounds = math.ceil(nch / (P * T))
    last = (N - (nch - 1) * k) if N % k else k
    # the last round holds the short chunk when it is alone in it; otherwise a full one ends last
    want = (rounds - 1) * k * t + (k * t if nch - (rounds - 1) * P * T > 1 or N % k == 0 else last * t)
    check(abs(r["wall"] - want) < 1e-9,
          "dynamic:%d N=%d P=%d T=%d: wall %.6g = %.6g" % (k, N, P, T, r["wall"], want))

# 2. the counter saturates: chunk 1, service time s at rank 0, W workers of sample time t:
#    throughput N / wall <= 1 / s, and close to min(W / (t + L + s), 1 / s)
for P, t_s, s in [(256, 1e-4, 1e-6), (4096, 1e-3, 1e-6), (64, 1e-3, 1e-6), (2048, 1e-3, 4e-6)]:
    N = 40000
    M = zero(L=3e-6, L0=3e-6, s=s)
    r = S.simulate(np.full(N, t_s), [N], P, 1, ("dynamic", 1), M, check=True)
    thr = N / r["wall"]
    bound = min(P / (t_s + M.L + s), 1 / s)
    check(thr <= 1 / s * (1 + 1e-9) and thr >= 0.9 * bound and thr <= bound * (1 + 1e-6),
          "saturation P=%d t=%g s=%g: %.4g samples/s, bound min(W/(t+L+s), 1/s) = %.4g, "
          "counter busy %.1f%%" % (P, t_s, s, thr, bound, 100 * r["counter_utilization"]))
# mbstudy's per-sample progress request doubles the load at chunk 1
N = 40000
r1 = S.simulate(np.full(N, 1e-4), [N], 4096, 1, ("dynamic", 1), zero(L=3e-6, L0=3e-6, s=1e-6))
r2 = S.simulate(np.full(N, 1e-4), [N], 4096, 1, ("dynamic", 1),
                zero(L=3e-6, L0=3e-6, s=1e-6, count_done="sample"))
check(r2["counter_requests"] == 2 * r1["counter_requests"] - 4096 and
      abs(N / r2["wall"] - 0.5e6) / 0.5e6 < 0.05,
      "progress requests: %d requests (chunk 1: 2 per sample), %.4g samples/s ~ 1/(2 s) = 5e5"
      % (r2["counter_requests"], N / r2["wall"]))

# 3. the guided chunks: sched_sim's formula and its simulated sequence against the
#    transcription of scheduler.c
cases = [(0, 1000, 1), (0, 100000, 1), (0, 100000, 8), (50, 70, 3), (0, 10, 16), (0, 7, 1)]
seqs_ok = True
for first, end, W in cases:
    seen, seq, seq2 = first, [], []
    while seen < end:  # one worker asking again and again (no one else moves the counter)
        c = c_guided(end, seen, W)
        seq.append(min(c, end - seen))
        seen += c
    # the simulator with W workers but only one of them in the batch: P = 1 rank of 1 thread
    # whose formula uses nworkers = W: emulate by a batch seen by one worker
    log = []
    M = zero(L=1e-6, L0=1e-6, s=0.0)
    # a single worker: sched_sim uses W = P x T; give P = W ranks but only check the formula
    # on the sequence rank 0 alone would see when W = 1
    if W == 1:
        S.run_batch([1.0] * end, list(np.arange(end + 1, dtype=float)), first, end, 0.0, 1, 1,
                    ("guided", 0), M, log=log)
        seq2 = [min(c, end - st) for (_, st, c, _) in log if st < end]
        same = seq2 == seq
        seqs_ok &= same
        print("     guided [%d, %d) 1 worker: scheduler.c: %s; sched_sim: %s" % (
            first, end, runs(seq), "the same" if same else runs(seq2)))
    else:
        print("     guided [%d, %d) %d workers, one asking: scheduler.c: %s" % (
            first, end, W, runs(seq)))
    for sv in range(first - 3, end + 5):
        if S.guided_chunk(end, sv, W) != c_guided(end, sv, W):
            seqs_ok = False
            print("     guided_chunk(%d, %d, %d) = %d, scheduler.c: %d" % (
                end, sv, W, S.guided_chunk(end, sv, W), c_guided(end, sv, W)))
check(seqs_ok, "guided chunk sizes = scheduler.c's formula (sequences above)")
# many workers with latency: every chunk the simulator hands out is the formula at the value
# its worker read (the MPI_NO_OP) and starts where the counter was at its MPI_SUM
ok = True
for P, T, N in [(4, 2, 3000), (16, 1, 20000), (3, 3, 500)]:
    log = []
    rng = np.random.default_rng(P)
    work = rng.lognormal(-3, 1, N)
    M = zero(L=3e-6, L0=0.2e-6, s=1e-6, count_done="sample")
    d = (work + 0.0).tolist()
    prefix = np.concatenate([[0.0], np.cumsum(work)]).tolist()
    r = S.run_batch(d, prefix, 0, N, 0.0, P, T, ("guided", 0), M, log=log, check=True)
    counter = 0
    for w, st, c, seen in log:
        ok &= st == counter and c == c_guided(N, seen, P * T) and seen <= st
        counter += c
    print("     guided P=%d T=%d N=%d: %d chunks: %s" % (
        P, T, N, len(log), runs([min(c, N - st) for _, st, c, _ in log if st < N])))
check(ok, "guided with many workers: every chunk = formula(end, value read), taken in counter order")
# guided1 (scheduler.c since 2026-11-28): no read; a thread's `seen` is the start its previous
# fetch-and-add returned + that request's c times the workers (the batch's first sample before
# its first one)
ok = True
for P, T, first, N, cd in [(4, 2, 0, 3000, "chunk"), (16, 1, 100, 20000, "chunk"),
                           (3, 3, 7, 500, "sample"), (64, 4, 0, 5000, "none")]:
    log = []
    rng = np.random.default_rng(P + N)
    work = rng.lognormal(-3, 1, first + N)
    M = zero(L=3e-6, L0=0.2e-6, s=1e-6, count_done=cd)
    prefix = np.concatenate([[0.0], np.cumsum(work)]).tolist()
    S.run_batch(work.tolist(), prefix, first, first + N, 0.0, P, T, ("guided1", 0), M, log=log,
                check=True)
    counter, last = first, {}
    for w, st, c, seen in log:
        ok &= (st == counter and seen == last.get(w, first) and
               c == c_guided(first + N, seen, P * T))
        last[w] = st + c * P * T
        counter += c
    ok &= sorted(w for w, st, _, _ in log if st >= first + N) == list(range(P * T))
    print("     guided1 P=%d T=%d [%d, %d) count-done %s: %d fetch-and-adds (%d past the end): %s"
          % (P, T, first, first + N, cd, len(log), P * T,
             runs([min(c, first + N - st) for _, st, c, _ in log if st < first + N])))
check(ok, "guided1: every chunk = formula(end, seen), seen = the thread's previous start + W c "
      "(the batch's first at first), taken in counter order; one last fetch-and-add per thread")

# 4. every policy takes every sample once (heterogeneous times, latency, threads, batches)
ok = True
rng = np.random.default_rng(7)
work = rng.lognormal(-2, 1.2, 3000)
for pol in ["static", "roundrobin", "guided", "guided1", "dynamic:1", "dynamic:16", "dynamic:256",
            "hier"]:
    for cd in ["chunk", "sample", "none"]:
        M = S.Model(count_done=cd, node_ranks=4, journal=1e-4, merge=1e-4, close=1e-5)
        try:
            S.simulate(work, [1000, 700, 1300], 12, 2, S.parse_policy(pol), M, check=True)
        except AssertionError as e:
            ok = False
            print("     %s %s: %s" % (pol, cd, e))
check(ok, "every policy takes every sample exactly once (3 batches, 12 ranks x 2 threads)")

# 5. the merger's vectorized loop against a plain one, sample by sample
ok = True
for trial in range(20):
    rng = np.random.default_rng(100 + trial)
    n = 400
    avail = np.sort(rng.uniform(0, 2, n)) + rng.uniform(0, 0.05, n) * (rng.uniform(size=n) < 0.3)
    M = S.Model(merge=rng.choice([1e-4, 3e-3, 2e-2]), poll=5e-3, c_list=1e-5, c_access=1e-5)
    mg = S.Merger(M, 64)
    got = mg.run(avail, n)
    # plain: sample after sample; nothing there -> idle loops of (find + poll); a run of samples
    # that stops short -> find + prune
    tau, i, per = 0.0, 0, mg.find + M.poll
    while i < n:
        if avail[i] > tau:
            tau += math.ceil((avail[i] - tau) / per) * per
            continue
        while i < n and avail[i] <= tau:
            tau += mg.m
            i += 1
        if i < n:
            tau += mg.find + mg.prune
    ok &= abs(got - tau) < 1e-9
check(ok, "merger: the vectorized loop = the sample-by-sample loop (20 random cases)")

# 6. a merger slower than the samplers ends the study N x m after its first sample
N, P = 20000, 64
M = zero(writer="merger", merge=1e-3, c_list=0.0, c_access=0.0)
r = S.simulate(np.full(N, 0.01), [N], P, 1, ("dynamic", 1), M)
want = 0.01 + N * (1e-3 + S.interp_log(S.SCAN_NS, P) * 1e-9 * P / 2)
check(abs(r["wall"] - want) < M.poll,
      "merger-bound study: wall %.6f = first sample + N (m + scan) = %.6f (within a poll)"
      % (r["wall"], want))

# 7. the two-level counter: far fewer requests at rank 0, same wall when nothing saturates
N, P = 200000, 1024
work = np.random.default_rng(3).lognormal(-5.5, 0.5, N)
M = S.Model(writer="none", count_done="sample", node_ranks=64)
rf = S.simulate(work, [N], P, 1, ("guided", 0), M)
rh = S.simulate(work, [N], P, 1, ("hier", 0), M)
check(rh["counter_requests"] * 20 < rf["counter_requests"] and
      rh["efficiency"] >= rf["efficiency"] - 0.02,
      "hier: %d requests at rank 0 (flat guided: %d), efficiency %.1f%% (flat %.1f%%, counter "
      "busy %.0f%%)" % (rh["counter_requests"], rf["counter_requests"], 100 * rh["efficiency"],
                        100 * rf["efficiency"], 100 * rf["counter_utilization"]))

# 8. mbstudy's protocol since 2026-11-28 (guided1 + count-done chunk): two requests per chunk at
#    rank 0 (its fetch-and-add, then its progress count after its last sample), and each thread's
#    last fetch-and-add of a batch (the one past the end) alone: requests = 2 x chunks + W x
#    batches; fewer than with the progress request per sample (and than the protocol before)
ok = True
rng = np.random.default_rng(11)
for P, T, N, batches in [(16, 1, 20000, [20000]), (8, 4, 5000, [1000, 2500, 1500]),
                         (256, 2, 30000, [30000]), (5, 3, 7, [7])]:
    work = rng.lognormal(-3, 1, N)
    M = S.Model(writer="none", count_done="chunk")
    r = S.simulate(work, batches, P, T, ("guided1", 0), M, check=True)
    rs = S.simulate(work, batches, P, T, ("guided1", 0), M.copy(count_done="sample"), check=True)
    ro = S.simulate(work, batches, P, T, ("guided", 0), M.copy(count_done="sample"), check=True)
    W, nb = P * T, len(batches)
    ok &= (r["counter_requests"] == 2 * r["chunks"] + W * nb and
           r["done_requests"] == r["chunks"] and r["counter_reads"] == 0 and
           r["counter_fetches"] == r["chunks"] + W * nb and
           rs["counter_requests"] == rs["chunks"] + W * nb + N and
           # (chunks of 1 sample: as many progress requests either way)
           (r["counter_requests"] < rs["counter_requests"] if r["chunks"] < N else
            r["counter_requests"] == rs["counter_requests"]) and
           r["counter_requests"] < ro["counter_requests"])
    print("     P=%d T=%d N=%d, %d batch(es): guided1+chunk %d requests = 2 x %d chunks + %d "
          "(W x batches); guided1+sample %d; guided+sample (before 2026-11-28) %d" % (
              P, T, N, nb, r["counter_requests"], r["chunks"], W * nb, rs["counter_requests"],
              ro["counter_requests"]))
check(ok, "count-done chunk: requests at rank 0 = 2 x chunks + one last fetch-and-add per thread "
      "and batch, fewer than with count-done sample (and than guided + sample)")

# 9. the command line: --count-done chunk through --json, guided1 with --check (every sample
#    once), mbstudy's protocol among the defaults
with tempfile.TemporaryDirectory() as tmp:
    h5 = os.path.join(tmp, "t.h5")
    n = 3000
    with h5py.File(h5, "w") as f:
        f["status/wall_time"] = np.random.default_rng(5).lognormal(-3, 1, n)
        f["status/done"] = np.ones(n, dtype=np.int8)
        f["status/code"] = np.zeros(n, dtype=np.int32)
    js = os.path.join(tmp, "r.json")
    cmd = [sys.executable, os.path.abspath(sim_path), "--times", "t=" + h5, "--ranks", "8,64",
           "--threads", "1,2", "--samples", "0,20000", "--policies", "guided1,guided+sample",
           "--count-done", "chunk,sample", "--writer", "none,merger", "--check", "--quiet",
           "--json", js]
    p = subprocess.run(cmd, capture_output=True, text=True)
    ok = p.returncode == 0
    if not ok:
        print(p.stdout[-2000:], p.stderr[-2000:])
    res = json.load(open(js))["results"] if ok else []
    new = [r for r in res if r["policy"] == "guided1" and r["count_done"] == "chunk"]
    old = {(r["ranks"], r["threads"], r["samples"], r["writer"]): r for r in res
           if r["policy"] == "guided" and r["count_done"] == "sample"}
    ok &= len(new) == 16 and len(old) == 16 and not any(
        r["policy"] == "guided" and r["count_done"] == "chunk" for r in res)
    for r in new:
        ok &= (r["counter_requests"] == 2 * r["chunks"] + r["workers"] and
               r["counter_requests"] < old[(r["ranks"], r["threads"], r["samples"],
                                            r["writer"])]["counter_requests"])
    check(ok, "sched_sim.py --count-done chunk --check --json: guided1 takes every sample once; "
          "requests = 2 x chunks + W in every one of %d cases, fewer than guided+sample's" % len(new))
    # the default --policies and --count-done
    p = subprocess.run([sys.executable, os.path.abspath(sim_path), "--times", "t=" + h5, "--ranks",
                        "4", "--samples", "200", "--writer", "none", "--quiet", "--json", js],
                       capture_output=True, text=True)
    res = json.load(open(js))["results"] if p.returncode == 0 else []
    ok = (any(r["policy"] == "guided1" and r["count_done"] == "chunk" for r in res) and
          any(r["policy"] == "guided" and r["count_done"] == "sample" for r in res) and
          S.Model().count_done == "chunk")
    check(ok, "the defaults include mbstudy's protocol (guided1, count-done chunk)")

print("%d failure(s); %.1f s" % (len(failures), time.time() - t_start))
sys.exit(1 if failures else 0)
