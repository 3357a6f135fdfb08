#!/usr/bin/python3
"""sched_sim.py: a discrete-event simulator of mbstudy's scheduling and writing at scale.

It replays measured per-sample run times (the /status/wall_time of mbstudy result files:
every sample that was written, failed or ended early ones included) on virtual MPI ranks x
OpenMP threads and predicts the study's wall time and parallel efficiency
    efficiency = total sample work / (ranks x threads x wall time)
for several scheduling policies, with a model of what mbstudy really does (studies/engine.c,
scheduler.c, journal.c, merge.c):

* The work counter (scheduler.c): one MPI window on rank 0; every request is an
  MPI_Fetch_and_op + MPI_Win_flush, a round trip of latency L (L0 for rank 0's own threads),
  served by rank 0 as a single FIFO server of service time s (contention appears when requests
  arrive faster than 1/s). Inside a rank the requests are serialized by
  `omp critical(mbs_mpi)`: a thread holds it for its whole round trip.
  mbstudy's protocol (since 2026-11-28) is policy guided1 with --count-done chunk: a thread
  sizes its chunk c = clamp((end - seen) / (4 x ranks x threads), 1, 64) from `seen`, its own
  estimate of the counter (the start its previous fetch-and-add returned + W times that
  request's c, W = ranks x threads: every worker takes about one chunk meanwhile; the batch's
  first sample at first), and takes it with ONE request (the MPI_SUM of c); after
  the chunk's last sample it makes one more request, the progress count of the chunk's samples
  (mbs_scheduler_count_done): two requests per chunk, and each thread's last fetch-and-add of
  a batch (the one past the end) alone. Before 2026-11-28 it was policy guided with
  --count-done sample: an MPI_NO_OP read of the counter, then the MPI_SUM of c from that value
  (two requests per chunk), and a progress request after every sample.
* The writes: no collective HDF5 write. Each thread appends every sample to its own journal
  (a write() of the record: cost j per sample, calibrated), and rank 0's merger thread reads
  the journals and writes the result file in sample order (deflate + HDF5: cost m per sample,
  calibrated), plus what grows with the number of journals (merge.c: step() scans every
  source for the next sample, find_sources() compares every listed journal name with every
  known one, prune() checks each journal's next segment). The merger runs beside the samplers
  (it is not on their critical path) but the study ends only when it has merged every sample
  and closed the file (the percentiles read every trajectory back: the end tail, calibrated
  per sample). An iterative driver (fit, calibration) waits at every batch (a generation) for
  the merger, then its absorb/next_batch; every batch costs two broadcasts (its head, its
  parameters) and an allreduce, each waited for by polite_wait (MPI_Testall and 1 ms sleeps:
  without a progress thread every round of a collective's tree waits for its ranks' next
  poll, half a sleep on average).
* Startup (every rank builds the plan) is a constant, calibrated from the 1-rank run.
* Writers (--writer): merger (mbstudy's, above), none (the scheduling alone), and two proposed
  designs: parallel (rank 0's merger with indexed sources and chunks compressed by
  compress_threads threads, not faster than write_bw), pernode (one indexed merger per
  node_ranks ranks, the output in node parts, the end tail shared).

Policies: static (contiguous blocks), roundrobin, dynamic:K (fixed chunks of K, one request
per chunk), guided1 (mbstudy's since 2026-11-28, scheduler.c: the formula on the thread's
estimate of the counter, start + W c of its previous fetch-and-add, W the workers: one request
per chunk), guided (mbstudy's before 2026-11-28: the same formula on an MPI_NO_OP read of the counter, two requests per chunk), and
hier (the proposed two-level counter: a pool per node of node_ranks ranks in shared memory,
refilled from rank 0 by guided node chunks, prefetched; the progress count kept per node).
`--count-done chunk|sample|none`: the progress request once per completed chunk (mbstudy since
2026-11-28: after the chunk's last sample, before the thread's next fetch-and-add), once per
sample (mbstudy before 2026-11-28), or not at all. So mbstudy today is guided1 + count-done
chunk, and before 2026-11-28 it was guided + count-done sample (kept for the comparison).

Not modelled: MPI start-up and launch, the file system's aggregate bandwidth (the needed
journal bandwidth is reported), operating-system noise, the merger thread taking a core from
rank 0's samplers, software-emulated RMA that waits for rank 0 to enter MPI (the model
assumes NIC atomics or asynchronous progress), rank 0's reset of the counter per batch
(mbs_scheduler_reset: one request before the batch's broadcast), samples skipped on resume.

Output: one row per case (wall time, efficiency with everything modelled, efficiency of the
scheduling alone, counter utilization, merger lag, the largest loss), tables of efficiency
per rank count and policy, the best policy per case; --json writes every number (losses by
cause included).

Usage:
  sched_sim.py --times posture=posture_1rank.h5 [--times mc=mc.h5] [--calib calib.json]
               [--ranks 1,2,3,64,...] [--threads 1] [--samples 1000000] [--policies ...]
               [--count-done chunk,sample,none] [--writer merger,none,parallel,pernode]
               [--batches oneshot|1W,4W --generations 20] [--json out.json]
  sched_sim.py --validate DIR [--validate-as guided1+chunk]
                                  (sched_validate.sh: calibrate, compare with the runs; the
                                   measured binary's protocol: guided1+chunk since 2026-11-28,
                                   guided+sample before)
"""
import argparse
import bisect
import collections
import heapq
import itertools
import json
import math
import os
import re
import sys
import time

import numpy as np

#---------------------------------- model parameters -------------------------------------------

# merge.c's costs that grow with the number of journals, measured by sched_validate.sh's
# micro-benchmark (mbs_merge_src is 608 bytes; the scan leaves the caches beyond ~1000 sources):
# ns per source checked in step(), ns per strcmp in find_sources()
SCAN_NS = {64: 0.9, 1024: 0.63, 16384: 7.0, 65536: 13.9}
STRCMP_NS = {64: 5.0, 1024: 3.1, 16384: 11.6, 65536: 16.2}


def interp_log(table, n):
    """per-item cost at n items, interpolated in log(n) between measured points"""
    xs = sorted(table)
    if n <= xs[0]:
        return table[xs[0]]
    if n >= xs[-1]:
        return table[xs[-1]]
    k = bisect.bisect_left(xs, n)
    a, b = xs[k - 1], xs[k]
    f = (math.log(n) - math.log(a)) / (math.log(b) - math.log(a))
    return table[a] + f * (table[b] - table[a])


class Model:
    """Every cost of the model, in seconds. Defaults: a cluster (InfiniBand remote atomics)."""

    def __init__(self, **kw):
        self.L = 3e-6            # round trip of a remote fetch-and-add (InfiniBand: 2-5 us)
        self.s = 1e-6            # rank 0's service time per counter request (serial server)
        self.L0 = 0.2e-6         # round trip for rank 0's own threads (shared memory)
        self.Ln = 0.2e-6         # hier: round trip to the node's pool (shared memory)
        self.sn = 0.1e-6         # hier: the node pool's service time
        self.node_ranks = 64     # hier: ranks per node pool
        self.node_max = 64       # hier: a node refill takes at most node_max x (workers of a node)
        self.worker_max = 64     # hier: a thread's chunk from its node pool at most this
        self.count_done = "chunk"    # the progress request: "chunk": once per completed chunk
        # (mbstudy since 2026-11-28); "sample": after every sample (before); "none"
        self.journal = 0.0       # s per sample: appending the record to the thread's journal
        self.merge = 0.0         # s per sample: the merger's read + HDF5 write (one source)
        self.close = 0.0         # s per sample: the end tail (close, percentiles, rename)
        self.close_fixed = 0.0   # s: the end tail's constant part
        self.startup = 0.0       # s: the plan on every rank, until the first sample
        self.writer = "merger"   # "merger": rank 0's merger (mbstudy); "none": no writing
        # modelled; proposed: "parallel" (rank 0's merger indexed, compression in threads),
        # "pernode" (one indexed merger per node_ranks ranks, the output in node parts)
        self.compress_threads = 16   # parallel: threads compressing chunks for the merger
        self.write_bw = 2e9      # parallel: bytes/s one writer gets from the file system
        self.record_bytes = 0    # bytes per sample (set from the result file)
        self.c_list = 1e-6       # find_sources: s per directory entry listed
        self.c_access = 5e-6     # prune: s per access() of a journal's next segment
        self.poll = 5e-3         # the merger's sleep when it finds nothing new
        self.coll_level = 2e-6   # a collective: s per level of its tree (the network)
        self.polite = 0.53e-3    # polite_wait's 1 ms sleeps (1.06 ms with the timer slack):
        # the mean wait for the next poll, per round of a collective
        self.absorb = 0.0        # iterative drivers: rank 0's absorb + next_batch per batch
        self.cpu_factor = 1.0    # sample times x this (processor sharing: oversubscribed cores)
        for k, v in kw.items():
            if not hasattr(self, k):
                raise KeyError(k)
            setattr(self, k, v)

    def copy(self, **kw):
        m = Model()
        m.__dict__.update(self.__dict__)
        for k, v in kw.items():
            if not hasattr(m, k):
                raise KeyError(k)
            setattr(m, k, v)
        return m


def guided_chunk(end, seen, nworkers):
    """scheduler.c's mbs_scheduler_next, transcribed:
    long c = (end - seen) / (4 * nworkers); if (c < 1) c = 1; if (c > 64) c = 64;
    (C's `/` truncates toward zero; end - seen may be negative past the end)"""
    num, den = end - seen, 4 * nworkers
    c = abs(num) // den * (1 if num >= 0 else -1)
    if c < 1:
        c = 1
    if c > 64:
        c = 64
    return c


#---------------------------------- the samplers (discrete events) -----------------------------

READ, ADD, DONE = 0, 1, 2


def coverage_check(took, first, end):
    got = np.zeros(end - first, dtype=np.int64)
    for st, cnt, stride in took:
        if cnt > 0:
            got[st - first:st - first + cnt * stride:stride] += 1
    if not np.all(got == 1):
        raise AssertionError("samples taken %s times" % np.unique(got))


def run_batch(dur, prefix, first, end, t0, P, T, policy, M, log=None, check=False):
    """One batch [first, end): every thread of every rank starts at t0. dur: per-sample busy
    time of a thread (sample + journal), prefix its cumulative sum. Returns a dict: finish
    times of the threads, sample availability times (journal written), counter statistics."""
    W = P * T
    n = end - first
    avail = np.zeros(n)
    finish = [t0] * W
    blocked = [0.0] * W
    took = []                       # (start, count, stride) for the coverage check
    stats = {"requests": 0, "busy": 0.0, "wait": 0.0, "node_requests": 0, "refills": 0,
             "chunks": 0, "fetches": 0, "reads": 0, "done_requests": 0}
    done_mode = M.count_done        # the progress request: "chunk", "sample" or "none"
    if done_mode not in ("chunk", "sample", "none"):
        raise ValueError("count_done %s" % done_mode)
    done_req = done_mode != "none"

    kind, k = policy
    if kind in ("static", "roundrobin"):
        if not done_req:  # no request at all: vectorized
            if kind == "static":
                bounds = [first + (w * n) // W for w in range(W + 1)]
                for w in range(W):
                    a, b = bounds[w], bounds[w + 1]
                    finish[w] = t0 + prefix[b] - prefix[a]
                    avail[a - first:b - first] = t0 + np.asarray(prefix[a + 1:b + 1]) - prefix[a]
                    took.append((a, b - a, 1))
            else:
                d = np.asarray(dur[first:end])
                idx = np.arange(n)
                wk = idx % W
                for w in range(min(W, n)):
                    sel = idx[w::W]
                    c = np.cumsum(d[sel])
                    avail[sel] = t0 + c
                    finish[w] = t0 + c[-1]
                    took.append((first + w, len(sel), W))
            stats["chunks"] = sum(1 for _, cnt, _ in took if cnt > 0)
            if check:
                coverage_check(took, first, end)
            return {"finish": finish, "avail": avail, "blocked": blocked, "stats": stats,
                    "busy_end": t0}
    if kind == "hier":
        return run_batch_hier(dur, prefix, first, end, t0, P, T, M, log, check)

    # flat counter (or static with the per-sample progress request)
    lat = [M.L0 / 2 if w < T else M.L / 2 for w in range(W)]
    cur = [0] * W
    cend = [0] * W
    stride = [1] * W
    cval = [0] * W
    seenw = [first] * W
    kindw = [READ] * W
    want = [t0] * W                 # when the thread asked (for its blocked time)
    heap = []
    seq = itertools.count()
    counter = first
    sfree = -math.inf
    busy = 0.0
    nreq = 0
    nread = nfetch = ndone = 0
    dynamic = kind in ("guided", "guided1", "dynamic")
    first_kind = READ if kind == "guided" else ADD   # guided1: seen = its last start + W c
    # the rank lock (omp critical(mbs_mpi)): with T > 1, DEPART events (negative codes)
    pending = [False] * P           # a holder whose request has not reached rank 0 yet
    release = [-math.inf] * P       # when the holder's response comes back
    queue = [collections.deque() for _ in range(P)] if T > 1 else None

    def depart(w, t):
        want[w] = t
        if T == 1:
            heapq.heappush(heap, (t + lat[w], next(seq), w))
        else:
            heapq.heappush(heap, (t, next(seq), -w - 1))

    def start_chunk(w, st, cnt, std, t):
        """the thread has samples st, st+std, ... (cnt of them) from time t"""
        took.append((st, cnt, std))
        if done_mode == "sample":   # a progress request after every sample
            cur[w] = st
            cend[w] = st + cnt * std
            stride[w] = std
            te = t + dur[st]
            avail[st - first] = te
            kindw[w] = DONE
            depart(w, te)
            return
        if std == 1:
            te = t + prefix[st + cnt] - prefix[st]
            avail[st - first:st - first + cnt] = t + np.asarray(prefix[st + 1:st + cnt + 1]) - prefix[st]
        else:                       # roundrobin's samples (with a request: not vectorized)
            c = t + np.cumsum(np.asarray(dur[st:st + cnt * std:std]))
            avail[st - first:st - first + cnt * std:std] = c
            te = float(c[-1])
        if done_mode == "chunk":    # one progress request after the chunk's last sample
            cur[w] = st + (cnt - 1) * std
            cend[w] = st + cnt * std
            stride[w] = std
            kindw[w] = DONE
        else:
            kindw[w] = first_kind
        depart(w, te)

    if dynamic:
        for w in range(W):
            kindw[w] = first_kind
            depart(w, t0)
    else:
        for w in range(W):
            if kind == "static":
                a, b = first + (w * n) // W, first + ((w + 1) * n) // W
                if b > a:
                    start_chunk(w, a, b - a, 1, t0)
            else:
                cnt = len(range(first + w, end, W))
                if cnt:
                    start_chunk(w, first + w, cnt, W, t0)
    while heap:
        t, _, code = heapq.heappop(heap)
        if code < 0:  # DEPART: the thread wants the rank's lock
            w = -code - 1
            r = w // T
            if pending[r]:
                queue[r].append(w)
            else:
                d = t if t > release[r] else release[r]
                pending[r] = True
                heapq.heappush(heap, (d + lat[w], next(seq), w))
            continue
        w = code
        b = t if t > sfree else sfree
        sfree = b + M.s
        busy += M.s
        nreq += 1
        resp = sfree + lat[w]
        blocked[w] += resp - want[w]
        if T > 1:
            r = w // T
            release[r] = resp
            pending[r] = False
            if queue[r]:
                w2 = queue[r].popleft()
                pending[r] = True
                heapq.heappush(heap, (resp + lat[w2], next(seq), w2))
        kw = kindw[w]
        if kw == READ:
            nread += 1
            seenw[w] = counter
            cval[w] = guided_chunk(end, counter, W)
            kindw[w] = ADD
            depart(w, resp)
        elif kw == ADD:
            nfetch += 1
            st = counter
            if kind == "guided":
                c = cval[w]
            elif kind == "guided1":
                c = guided_chunk(end, seenw[w], W)
            else:
                c = k
            counter += c
            if log is not None:
                log.append((w, st, c, seenw[w] if kind != "dynamic" else None))
            if kind == "guided1":
                seenw[w] = st + c * W
            if st >= end:
                finish[w] = resp
                continue
            start_chunk(w, st, min(c, end - st), 1, resp)
        else:  # DONE: the progress count of sample cur[w] (count_done chunk: of its chunk)
            ndone += 1
            nx = cur[w] + stride[w]
            if nx < cend[w]:
                cur[w] = nx
                te = resp + dur[nx]
                avail[nx - first] = te
                depart(w, te)
            elif dynamic:
                kindw[w] = first_kind
                depart(w, resp)
            else:
                finish[w] = resp
    if check:
        coverage_check(took, first, end)
    stats["requests"] = nreq
    stats["busy"] = busy
    stats.update(chunks=len(took), fetches=nfetch, reads=nread, done_requests=ndone)
    return {"finish": finish, "avail": avail, "blocked": blocked, "stats": stats,
            "busy_end": sfree}


def run_batch_hier(dur, prefix, first, end, t0, P, T, M, log=None, check=False):
    """The proposed two-level counter: every node (node_ranks ranks, their threads) has a pool
    of sample ranges in shared memory. A thread takes c = clamp(pool / (2 x node workers), 1,
    worker_max) samples from it (a shared-memory atomic: round trip Ln, service sn at the
    node); the progress count is a node-local add (count_done chunk: one more node request per
    chunk, sample: per sample) pushed to rank 0 with the refills. A pool that falls below the
    node's worker count asks rank 0 (round trip L, service s) for the next node chunk R =
    clamp((end - seen) / (4 x nodes), 1, node_max x node workers) — prefetched, so that the
    threads rarely wait for it."""
    W = P * T
    G = max(1, min(M.node_ranks, P))
    nnodes = (P + G - 1) // G
    wn = [0] * nnodes
    for w in range(W):
        wn[(w // T) // G] += 1
    n = end - first
    avail = np.zeros(n)
    finish = [t0] * W
    blocked = [0.0] * W
    want = [t0] * W
    took = []
    heap = []
    seq = itertools.count()
    done_mode = M.count_done
    if done_mode not in ("chunk", "sample", "none"):
        raise ValueError("count_done %s" % done_mode)
    ndone = 0
    # node state
    pools = [collections.deque() for _ in range(nnodes)]   # [a, b) ranges
    psize = [0] * nnodes
    refill_pending = [False] * nnodes
    exhausted = [False] * nnodes
    waiters = [collections.deque() for _ in range(nnodes)]
    nfree = [-math.inf] * nnodes
    gfree = -math.inf
    counter = first
    gbusy = 0.0
    nreq = 0
    nnode_req = 0
    # thread state
    kindw = [ADD] * W               # ADD: asks its pool for a chunk; DONE: progress count
    cur = [0] * W
    cend = [0] * W
    # events: (time, seq, type, who): 0 thread request at its node, 1 refill at rank 0,
    # 2 refill answer back at the node
    EV_NODE, EV_GLOBAL, EV_REFILL = 0, 1, 2
    half_n = M.Ln / 2
    half_g = [M.L0 / 2 if nd == 0 else M.L / 2 for nd in range(nnodes)]

    def node_of(w):
        return (w // T) // G

    def ask(w, t):
        want[w] = t
        heapq.heappush(heap, (t + half_n, next(seq), EV_NODE, w))

    def maybe_refill(nd, t):
        if not refill_pending[nd] and not exhausted[nd] and psize[nd] < wn[nd]:
            refill_pending[nd] = True
            heapq.heappush(heap, (t + half_g[nd], next(seq), EV_GLOBAL, nd))

    def take(nd):
        c = psize[nd] // (2 * wn[nd])
        c = 1 if c < 1 else (M.worker_max if c > M.worker_max else c)
        a, b = pools[nd][0]
        c = min(c, b - a)
        if a + c == b:
            pools[nd].popleft()
        else:
            pools[nd][0] = (a + c, b)
        psize[nd] -= c
        return a, c

    def start_chunk(w, st, cnt, t):
        took.append((st, cnt, 1))
        if log is not None:
            log.append((w, st, cnt))
        if done_mode == "sample":
            cur[w] = st
            cend[w] = st + cnt
            te = t + dur[st]
            avail[st - first] = te
            kindw[w] = DONE
            want[w] = te
            heapq.heappush(heap, (te + half_n, next(seq), EV_NODE, w))
            return
        te = t + prefix[st + cnt] - prefix[st]
        avail[st - first:st - first + cnt] = t + np.asarray(prefix[st + 1:st + cnt + 1]) - prefix[st]
        if done_mode == "chunk":    # the chunk's progress count: one node request after it
            cur[w] = st + cnt - 1
            cend[w] = st + cnt
            kindw[w] = DONE
            want[w] = te
            heapq.heappush(heap, (te + half_n, next(seq), EV_NODE, w))
        else:
            kindw[w] = ADD
            ask(w, te)

    def serve(w, nd, t):
        """a thread's chunk request served at the node at time t (its service done)"""
        resp = t + half_n
        if psize[nd] > 0:
            a, c = take(nd)
            blocked[w] += resp - want[w]
            start_chunk(w, a, c, resp)
            maybe_refill(nd, t)
            return True
        if exhausted[nd]:
            blocked[w] += resp - want[w]
            finish[w] = resp
            return True
        return False

    for w in range(W):
        ask(w, t0)
    while heap:
        t, _, ev, who = heapq.heappop(heap)
        if ev == EV_NODE:
            w = who
            nd = node_of(w)
            b = t if t > nfree[nd] else nfree[nd]
            nfree[nd] = b + M.sn
            nnode_req += 1
            if kindw[w] == DONE:
                ndone += 1
                resp = nfree[nd] + half_n
                blocked[w] += resp - want[w]
                nx = cur[w] + 1
                if nx < cend[w]:
                    cur[w] = nx
                    te = resp + dur[nx]
                    avail[nx - first] = te
                    want[w] = te
                    heapq.heappush(heap, (te + half_n, next(seq), EV_NODE, w))
                else:
                    kindw[w] = ADD
                    ask(w, resp)
                continue
            if not serve(w, nd, nfree[nd]):
                waiters[nd].append(w)
                maybe_refill(nd, nfree[nd])
        elif ev == EV_GLOBAL:
            nd = who
            b = t if t > gfree else gfree
            gfree = b + M.s
            gbusy += M.s
            nreq += 1
            cap = M.node_max * wn[nd]
            R = (end - counter) // (4 * nnodes) if end > counter else 0
            R = 1 if R < 1 else (cap if R > cap else R)
            st = counter
            counter += R
            heapq.heappush(heap, (gfree + half_g[nd], next(seq), EV_REFILL, (nd, st, R)))
        else:
            nd, st, R = who
            refill_pending[nd] = False
            if st >= end:
                exhausted[nd] = True
            else:
                b = min(st + R, end)
                pools[nd].append((st, b))
                psize[nd] += b - st
            # the waiting threads, one node service each
            tt = t
            while waiters[nd]:
                w = waiters[nd][0]
                tt = (tt if tt > nfree[nd] else nfree[nd]) + M.sn
                nfree[nd] = tt
                if not serve(w, nd, tt):
                    break
                waiters[nd].popleft()
            maybe_refill(nd, t)
    if check:
        coverage_check(took, first, end)
    stats = {"requests": nreq, "busy": gbusy, "node_requests": nnode_req, "refills": nreq,
             "chunks": len(took), "fetches": nreq, "reads": 0, "done_requests": ndone}
    return {"finish": finish, "avail": avail, "blocked": blocked, "stats": stats,
            "busy_end": gfree}


#---------------------------------- the merger -------------------------------------------------

class Merger:
    """rank 0's merger thread (merge.c): samples in index order as the journals hold them;
    per sample m + the scan over the journals; every loop that ends short of its limit lists
    the folder and compares names (find_sources), every loop that merged something checks the
    journals' next segments (prune), a loop that merged nothing sleeps `poll`."""

    def __init__(self, M, nsrc, nwriters=1, indexed=False, speedup=1.0, floor=0.0):
        """nwriters > 1: that many writers share the samples (each with its share of the
        journals); indexed: the proposed merge.c (a heap of sources by their next sample, a
        hash of known names, prune from the listing) instead of the linear scans; speedup:
        the per-sample cost divided by the compression threads, but not below `floor` (the
        file system's write bandwidth)"""
        self.M = M
        self.nsrc = max(1, nsrc // nwriters if nwriters > 1 else nsrc)
        if indexed:
            scan = 30e-9 * math.log2(max(2, self.nsrc))
            self.find = M.c_list * self.nsrc
            self.prune = 0.0
        else:
            scan = interp_log(SCAN_NS, self.nsrc) * 1e-9 * self.nsrc / 2
            self.find = M.c_list * self.nsrc + interp_log(STRCMP_NS, self.nsrc) * 1e-9 * self.nsrc ** 2 / 2
            self.prune = M.c_access * self.nsrc
        self.m = max(M.merge / speedup, floor) + scan
        self.scan = scan
        self.nwriters = nwriters
        self.tau = 0.0
        self.next = 0
        self.busy = 0.0

    def run(self, avail_abs, upto, kicked_at=None):
        """merge samples [next, upto) whose availability times are avail_abs (index from 0);
        kicked_at: someone waits from this time (mbs_merger_wait: no sleep after it)"""
        m = self.m / self.nwriters   # nwriters > 1: the writers share the samples
        tau = self.tau
        nx = self.next
        per = self.find + self.M.poll
        while nx < upto:
            a = avail_abs[nx]
            if a > tau:
                # idle loops: each lists the folder (find) and sleeps poll, until the sample is
                # there; a waiting rank 0 (mbs_merger_wait) wakes it at once
                k = math.ceil((a - tau) / per)
                wake = tau + k * per
                if kicked_at is not None:
                    wake = min(wake, max(a, kicked_at))
                self.busy += k * self.find
                tau = wake
                continue
            # a run of samples merged back to back
            B = 256
            while nx < upto:
                hi = min(upto, nx + B)
                seg = avail_abs[nx:hi]
                cum = tau + m * np.arange(0, hi - nx)
                bad = np.nonzero(seg > cum)[0]
                j = nx + (bad[0] if len(bad) else hi - nx)
                tau += m * (j - nx)
                self.busy += m * (j - nx)
                nx = j
                if len(bad):
                    break
                B *= 2
            if nx < upto:  # looked for the next sample in vain: find_sources, then prune
                tau += self.find + self.prune
                self.busy += self.find + self.prune
        self.tau = tau
        self.next = nx
        return tau


#---------------------------------- a study ----------------------------------------------------

def coll_time(P, M):
    """a non-blocking collective waited for with polite_wait (engine.c: MPI_Testall, then 1 ms
    sleeps): without an asynchronous progress thread a round of the collective's tree moves on
    only when its ranks call MPI_Testall, so every one of its ceil(log2 P) rounds, and the
    waiter's notice at the end, costs half a sleep on average"""
    if P <= 1:
        return 0.0
    levels = math.ceil(math.log2(P))
    return levels * M.coll_level + (levels + 1) * M.polite


# the Model's fields that only the writer uses: a one-shot batch's scheduling is the same
# whatever they are (simulate's cache)
WRITER_ONLY = ("writer", "merge", "close", "close_fixed", "compress_threads", "write_bw",
               "record_bytes", "c_list", "c_access", "poll")


def simulate(work, batches, P, T, policy, M, check=False, log=None, cache=None):
    """work: per-sample compute times (s) in index order; batches: their sizes (one-shot: [N]).
    cache: a dict that keeps a one-shot study's schedule for the next call with another writer.
    Returns the prediction."""
    N = len(work)
    W = P * T
    d = np.asarray(work, dtype=float) * M.cpu_factor + M.journal
    dur = d.tolist()
    prefix = np.concatenate([[0.0], np.cumsum(d)]).tolist()
    writer = M.writer
    nw, tail_div = 1, 1.0
    if writer == "merger":        # mbstudy's
        mg = Merger(M, W)
    elif writer == "parallel":    # proposed: indexed merge.c, chunks compressed by threads
        mg = Merger(M, W, 1, True, M.compress_threads, M.record_bytes / M.write_bw)
        tail_div = M.compress_threads
    elif writer == "pernode":     # proposed: one writer per node, the output in node parts
        nw = max(1, (P + M.node_ranks - 1) // M.node_ranks)
        mg = Merger(M, W, nw, True)
        tail_div = nw
    elif writer == "none":
        mg = None
    else:
        raise ValueError("writer %s" % writer)
    t = M.startup * M.cpu_factor
    first = 0
    avail_all = np.zeros(N)
    finish_sum_idle = 0.0
    blocked_sum = 0.0
    stats = collections.Counter()
    iterative = len(batches) > 1
    mwait = 0.0                                 # batches waiting for the merger
    wall_b = 0.0
    for bi, cnt in enumerate(batches):
        end = first + cnt
        # issue_batch: rank 0's next_batch (an iterative driver's), the broadcast
        # (an iterative driver's batch: the head, then its parameters: two broadcasts)
        t_start = t + (2 * coll_time(P, M) + M.absorb if iterative else coll_time(P, M))
        key = None
        if cache is not None and not iterative and log is None:
            key = (id(work), N, P, T, policy, t_start, check,
                   tuple(sorted((k2, v) for k2, v in M.__dict__.items() if k2 not in WRITER_ONLY)))
        if key is not None and key in cache:
            r = cache[key]
        else:
            r = run_batch(dur, prefix, first, end, t_start, P, T, policy, M, log=log, check=check)
            if key is not None:
                cache.clear()                    # the last schedule only
                cache[key] = r
        fin = r["finish"]
        wend = max(fin)
        finish_sum_idle += sum(wend - f for f in fin)
        blocked_sum += sum(r["blocked"])
        for k2, v in r["stats"].items():
            stats[k2] += v
        avail_all[first:end] = r["avail"]
        t_done = wend + coll_time(P, M)          # end_batch's allreduce
        if iterative and mg is not None:         # rank 0 waits for the merger (and kicks it)
            t_m = mg.run(avail_all, end, kicked_at=t_done)
            mwait += max(0.0, t_m - t_done)
            t_done = max(t_done, t_m)
        t = t_done
        first = end
    # the end: the empty batch's broadcast, the flags and sums (allreduce), the merger's last
    # samples, close and rename
    t_end_workers = t + 2 * coll_time(P, M)
    wall_sched = t_end_workers - mwait          # without the writer
    if mg is not None:
        t_m = mg.run(avail_all, N, kicked_at=t_end_workers)
        tail = (M.close_fixed + M.close * N) / tail_div
        wall = max(t_end_workers, t_m) + tail
        merger_busy = mg.busy + tail
        merger_lag = max(0.0, t_m - t_end_workers)
    else:
        wall = wall_sched
        tail = merger_busy = merger_lag = 0.0
    total = float(np.sum(work))
    eff = total / (W * wall)
    span = max(wall_sched - M.startup * M.cpu_factor, 1e-300)
    res = {
        "ranks": P, "threads": T, "workers": W, "policy": policy_name(policy),
        "samples": N, "batches": len(batches), "work": total,
        "wall": wall, "efficiency": eff,
        "wall_sched": wall_sched, "efficiency_sched": total / (W * wall_sched),
        "counter_requests": stats["requests"],
        # the requests' kinds (flat counter: requests = reads + fetches + done requests; hier:
        # requests = the node refills, the threads' chunks and progress counts at their nodes)
        "chunks": stats["chunks"], "counter_fetches": stats["fetches"],
        "counter_reads": stats["reads"], "done_requests": stats["done_requests"],
        "counter_utilization": stats["busy"] / span,
        "node_requests": stats.get("node_requests", 0),
        "mean_blocked_per_request": blocked_sum / max(1, stats["requests"] + stats.get("node_requests", 0)),
        "merger_busy": merger_busy, "merger_lag": merger_lag, "tail": tail,
        "merger_per_sample": (mg.m if mg else 0.0), "merger_find": (mg.find if mg else 0.0),
        # the losses, as fractions of W x wall
        "loss_startup": M.startup * M.cpu_factor / wall,
        "loss_counter": blocked_sum / (W * wall),
        "loss_journal": M.journal * N / (W * wall),
        "loss_imbalance": finish_sum_idle / (W * wall),
        "loss_writer": (wall - wall_sched) / wall,   # waits for the merger, its tail
        # the batches' broadcasts and allreduces (polite_wait), rank 0's absorb + next_batch
        "loss_sync": (len(batches) * ((3 * coll_time(P, M) + M.absorb) if iterative else
                                      2 * coll_time(P, M)) + 2 * coll_time(P, M)) / wall,
        "journal_bandwidth_needed": None,
    }
    other = 1 - eff - sum(res[k] for k in ("loss_startup", "loss_counter", "loss_journal",
                                             "loss_imbalance", "loss_writer", "loss_sync"))
    res["loss_other"] = other  # oversubscription (cpu_factor), rounding
    losses = {k[5:]: res[k] for k in res if k.startswith("loss_")}
    res["limiter"] = max(losses, key=losses.get)
    return res


def policy_name(p):
    kind, k = p
    if kind == "dynamic":
        return "dynamic:%d" % k
    if kind == "hier":
        return "hier"
    return kind


def parse_policy(s):
    s = s.strip()
    if s.startswith("dynamic:"):
        return ("dynamic", int(s.split(":")[1]))
    if s in ("static", "roundrobin", "guided", "guided1", "hier"):
        return (s, 0)
    raise ValueError("unknown policy %s" % s)


#---------------------------------- inputs -----------------------------------------------------

def load_times(path):
    """the written samples of an mbstudy result file: their wall times in index order, the
    failed ones counted, the record size and the batches (a fit's log of evaluations)"""
    import h5py
    with h5py.File(path, "r") as f:
        w = f["status/wall_time"][:]
        done = f["status/done"][:] == 1
        code = f["status/code"][:]
        traj = 0
        if "trajectories" in f:
            def visit(name, o):
                nonlocal traj
                if hasattr(o, "shape") and len(o.shape) == 3:
                    traj += 8 * o.shape[1] * o.shape[2]
            f["trajectories"].visititems(visit)
        nscal = len(f["scalars"]) if "scalars" in f else 0
        npar = f["parameters"].shape[1] if "parameters" in f else 0
        batches = None
        for g in ("fit/log/evaluations", "calibration/log/evaluations"):
            if g in f:
                ev = f[g][:].astype(np.int64)
                b = np.diff(np.concatenate([[0], ev]))
                if b.sum() == len(w) and np.all(b > 0):
                    batches = b.tolist()
        study = f.attrs.get("study", b"")
        study = study.decode() if isinstance(study, bytes) else str(study)
    times = w[done]
    return {"path": path, "study": study, "times": times, "n": int(done.sum()),
            "failed": int(np.sum(done & (code < 0))), "ended_early": int(np.sum(done & (code > 0))),
            "traj_bytes": traj, "record_bytes": traj + 8 * (npar + nscal) + 60,
            "batches": batches}


def virtual(times, N, mode, seed):
    """N virtual samples from the measured ones: replay (as measured), bootstrap (drawn with
    replacement, a fixed seed) or stretch (the index order kept: virtual i is measured
    floor(i n / N), a finer grid of the same axes)"""
    n = len(times)
    if mode == "replay" or N == n and mode != "bootstrap":
        return np.asarray(times, dtype=float)
    if mode == "bootstrap":
        rng = np.random.default_rng(seed)
        return rng.choice(times, size=N, replace=True)
    if mode == "stretch":
        return np.asarray(times)[(np.arange(N) * n) // N]
    raise ValueError(mode)


def gen_size(spec, W):
    """a generation's size: an int, or 'kW' (k per worker)"""
    return max(1, int(float(spec[:-1]) * W) if spec.endswith("W") else int(spec))


def gen_batches(N, spec, W, measured):
    """batch sizes: 'oneshot', 'measured' (the file's), or a generation size (an int, or 'kW':
    k per worker)"""
    if spec in (None, "oneshot"):
        return [N]
    if spec == "measured":
        return list(measured)
    lam = gen_size(spec, W)
    b = [lam] * (N // lam)
    if N % lam:
        b.append(N % lam)
    return b


#---------------------------------- validation (sched_validate.sh) -----------------------------

WROTE = re.compile(r"wrote (\S+): (\d+) samples \((\d+) this run, (\d+) before\), (\d+) failed; "
                   r"(\S+) s, of which (\S+) s waiting on journals \(mean of (\d+) threads?\) and "
                   r"(\S+) s on the result file after the last sample: I/O \S+% of the wall time "
                   r"\(the writer thread worked (\S+) s in all\)")


def parse_wrote(path):
    with open(path) as f:
        for line in f:
            m = WROTE.search(line)
            if m:
                g = m.groups()
                return {"samples": int(g[1]), "this_run": int(g[2]), "failed": int(g[4]),
                        "wall": float(g[5]), "journal_time": float(g[6]), "threads": int(g[7]),
                        "merge_time": float(g[8]), "merge_busy": float(g[9])}
    raise ValueError("%s: no 'wrote' line" % path)


def read_micro(d):
    """the micro-benchmarks' results: counter latencies (us) and the merger's scan costs (ns)"""
    fao = {}
    for n in (2, 3):
        p = os.path.join(d, "fao_%d.txt" % n)
        if not os.path.exists(p):
            continue
        alone, together = {}, None
        for line in open(p):
            w = line.split()
            if w and w[0] == "alone":
                alone[int(w[1])] = float(w[2])
            elif w and w[0] == "together":
                together = (float(w[2]), float(w[3]))
        if alone and together:
            fao[n] = {"rank0_alone_us": alone[0],
                      "remote_alone_us": float(np.mean([v for r, v in alone.items() if r > 0])),
                      "together_per_rank_us": together[0], "together_per_op_us": together[1]}
    for n in (2, 3):
        p = os.path.join(d, "pw_%d.txt" % n)
        if os.path.exists(p):
            w = open(p).read().split()
            if len(w) == 4 and n in fao:
                fao[n]["polite_allreduce_ms"] = float(w[2])
                fao[n]["polite_bcast_ms"] = float(w[3])
    scan, cmp_ = {}, {}
    p = os.path.join(d, "mscan.txt")
    size = None
    if os.path.exists(p):
        for line in open(p):
            w = line.split()
            if len(w) == 4:
                scan[int(w[0])] = float(w[2])
                cmp_[int(w[0])] = float(w[3])
                size = int(w[1])
    return fao, scan, cmp_, size


def local_model(fao, P):
    """the counter as measured here: rank 0's own latency, the others', the per-request service
    time when every rank asks at once (the 3-rank numbers for 3 ranks: oversubscribed)"""
    f = fao.get(3 if P >= 3 else 2) or fao.get(2) or {}
    if not f:
        return {}
    return {"L0": f["rank0_alone_us"] * 1e-6, "L": f["remote_alone_us"] * 1e-6,
            "s": min(f["together_per_op_us"], f["remote_alone_us"]) * 1e-6,
            "coll_level": f["remote_alone_us"] * 1e-6}


def parse_protocol(spec):
    """'guided1+chunk' (mbstudy since 2026-11-28), 'guided+sample' (before): the policy and the
    progress request of a measured mbstudy"""
    pol, _, cd = spec.partition("+")
    cd = cd or "chunk"
    if cd not in ("chunk", "sample", "none"):
        raise ValueError("count-done %s" % cd)
    return parse_policy(pol), cd


def validate(d, protocol="guided1+chunk"):
    """protocol: the measured mbstudy's policy + progress request (parse_protocol)"""
    policy, cd = parse_protocol(protocol)
    fao, scan, cmp_, size = read_micro(d)
    if scan:
        SCAN_NS.clear()
        SCAN_NS.update(scan)
        STRCMP_NS.clear()
        STRCMP_NS.update(cmp_)
    cores = os.cpu_count() or 1
    runs = collections.defaultdict(list)
    with open(os.path.join(d, "runs.txt")) as f:
        next(f)
        for line in f:
            st, n, rep, outer, l0, l1, log, h5 = line.split()
            w = parse_wrote(log)
            w.update(outer=float(outer), load_before=float(l0), load_after=float(l1), log=log,
                     h5=h5, repeat=int(rep))
            runs[(st, int(n))].append(w)
    calib = {"_micro": {"fao": fao, "scan_ns": scan, "strcmp_ns": cmp_,
                        "sizeof_mbs_merge_src": size, "cores": cores}}
    rows = []
    lines = []
    studies = sorted({k[0] for k in runs}, key=lambda x: ["posture", "mc", "fit"].index(x)
                     if x in ("posture", "mc", "fit") else 9)
    for st in studies:
        best = {n: min(runs[(st, n)], key=lambda w: w["wall"]) for n in (1, 2, 3) if (st, n) in runs}
        if 1 not in best:
            continue
        one = best[1]
        D1 = load_times(one["h5"])
        N = D1["n"]
        work1 = float(np.sum(D1["times"]))
        mo = os.path.join(d, "%s_merge.log" % st)
        merge_only = parse_wrote(mo) if os.path.exists(mo) else None
        cal = {"journal": one["journal_time"] * one["threads"] / max(1, one["this_run"]),
               "close": one["merge_time"] / N,
               # the merger alone (merge-only run) less the end tail; without one (an
               # iterative driver), the writer's time during the run (idle loops included)
               "merge": (max(0.0, merge_only["merge_time"] - one["merge_time"]) / N
                         if merge_only else max(0.0, one["merge_busy"] - one["merge_time"]) / N),
               "record_bytes": D1["record_bytes"], "samples": N, "times_file": one["h5"],
               "merge_only_time": merge_only["merge_time"] if merge_only else None}
        batches = D1["batches"] or [N]
        lm1 = local_model(fao, 1)
        M1 = Model(**lm1).copy(journal=cal["journal"], close=cal["close"], merge=cal["merge"],
                               count_done=cd)
        r0 = simulate(D1["times"], batches, 1, 1, policy, M1)
        # what the model leaves out at 1 rank: the startup (the plan); for an iterative driver
        # rank 0's absorb and next_batch, per batch (its plan is short)
        resid = max(0.0, one["wall"] - r0["wall"])
        cal["startup"] = resid if len(batches) == 1 else 0.0
        cal["absorb"] = 0.0 if len(batches) == 1 else resid / len(batches)
        calib[st] = {k: v for k, v in cal.items()}
        for n in sorted(best):
            meas = best[n]
            lm = local_model(fao, n)
            cpu = max(1.0, n / cores)
            M = Model(**lm).copy(journal=cal["journal"], close=cal["close"], merge=cal["merge"],
                                 startup=cal["startup"], absorb=cal["absorb"], cpu_factor=cpu,
                                 count_done=cd)
            pred = simulate(D1["times"], batches, n, 1, policy, M, check=True)
            # the run's own per-sample times (its machine load and oversubscription in them):
            # the scheduling and writing model alone
            Dn = load_times(meas["h5"])
            Mo = M.copy(cpu_factor=1.0)
            own = simulate(Dn["times"], Dn["batches"] or [Dn["n"]], n, 1, policy, Mo)
            slow = float(np.sum(Dn["times"])) / work1
            row = {"study": st, "ranks": n, "samples": N, "batches": len(batches),
                   "measured_wall": meas["wall"], "measured_outer": meas["outer"],
                   "predicted_wall": pred["wall"], "error": pred["wall"] / meas["wall"] - 1,
                   "measured_efficiency": work1 / (n * meas["wall"]),
                   "predicted_efficiency": work1 / (n * pred["wall"]),
                   "predicted_wall_own_times": own["wall"],
                   "error_own_times": own["wall"] / meas["wall"] - 1,
                   "sample_time_ratio": slow, "cpu_factor": cpu,
                   "load_before": meas["load_before"], "load_after": meas["load_after"],
                   "repeats": len(runs[(st, n)]), "merge_time": meas["merge_time"],
                   "merge_busy": meas["merge_busy"], "limiter": pred["limiter"],
                   "counter_requests": pred["counter_requests"], "protocol": protocol}
            rows.append(row)
    cols = [("study", lambda r: r["study"]), ("ranks", lambda r: str(r["ranks"])),
            ("samples", lambda r: str(r["samples"])), ("batches", lambda r: str(r["batches"])),
            ("measured s", lambda r: "%.2f" % r["measured_wall"]),
            ("predicted s", lambda r: "%.2f" % r["predicted_wall"]),
            ("error", lambda r: "%+.1f%%" % (100 * r["error"])),
            ("eff meas", lambda r: pct(r["measured_efficiency"])),
            ("eff pred", lambda r: pct(r["predicted_efficiency"])),
            ("pred own times s", lambda r: "%.2f" % r["predicted_wall_own_times"]),
            ("error", lambda r: "%+.1f%%" % (100 * r["error_own_times"])),
            ("sample x", lambda r: "%.2f" % r["sample_time_ratio"]),
            ("cpu x", lambda r: "%.2f" % r["cpu_factor"]),
            ("load", lambda r: "%.1f-%.1f" % (r["load_before"], r["load_after"]))]
    text = []
    text.append("# sched_sim.py validation: mbstudy runs here (mpiexec -n 1/2/3, 1 thread per rank, "
                "%d cores; %s)" % (cores, open(os.path.join(d, "machine.txt")).readline().strip("# \n")))
    text.append("# " + MODEL_NOTE)
    text.append("# predicted: %s (the measured mbstudy's protocol: %s) from the 1-rank run's "
                "per-sample times, the counter as measured here, the calibration below; 'cpu x': "
                "sample times stretched "
                "by ranks / cores (3 ranks on %d cores are oversubscribed). 'pred own times': the "
                "run's own per-sample times replayed (its load and oversubscription included): the "
                "scheduling and writing model alone. 'sample x': the run's summed sample times / "
                "the 1-rank run's. Efficiency = the 1-rank run's summed sample times / (ranks x "
                "wall). The 1-rank row calibrates the startup (its error is 0 by construction)."
                % (protocol, PROTOCOLS.get(protocol, "not mbstudy's"), cores))
    text.append(fmt_table(rows, cols))
    text.append("")
    text.append("# counter (MPI_Fetch_and_op + flush on rank 0's window), us; polite_wait on an "
                "MPI_Iallreduce / MPI_Ibcast, ms from the last arrival to the last return (the "
                "model: (rounds + 1) x %.2f ms): %s" % (1e3 * Model().polite, json.dumps(fao)))
    if scan:
        text.append("# merger (merge.c), sizeof(mbs_merge_src) = %s bytes: ns per source scanned "
                    "%s; ns per strcmp in find_sources %s" % (size, json.dumps(scan), json.dumps(cmp_)))
    for st in studies:
        if st in calib:
            c = calib[st]
            text.append("# calibration %s: journal %.3g ms/sample, merger %.3g ms/sample (%s), end "
                        "tail %.3g ms/sample, startup %.3g s, absorb+next_batch %.3g ms/batch, %d "
                        "bytes per record; per-sample times for predictions: %s" % (
                            st, 1e3 * c["journal"], 1e3 * c["merge"],
                            "merge-only run %.3g s" % c["merge_only_time"] if c["merge_only_time"]
                            else "no merge-only run: the writer's time during the run, idle loops "
                            "included", 1e3 * c["close"], c["startup"], 1e3 * c["absorb"],
                            c["record_bytes"], c["times_file"]))
    out = "\n".join(text) + "\n"
    print(out)
    with open(os.path.join(d, "validation.txt"), "w") as f:
        f.write(out)
    with open(os.path.join(d, "validation.json"), "w") as f:
        json.dump({"rows": rows, "calibration": calib, "protocol": protocol}, f, indent=1)
    with open(os.path.join(d, "calib.json"), "w") as f:
        json.dump(calib, f, indent=1)
    return 0


#---------------------------------- output -----------------------------------------------------

# mbstudy's counter protocols: policy + progress request
PROTOCOLS = {"guided1+chunk": "mbstudy since 2026-11-28",
             "guided+sample": "mbstudy before 2026-11-28"}

MODEL_NOTE = (
    "modelled: rank 0's MPI fetch-and-add counter (round trip L, FIFO service s, omp critical "
    "per rank; guided1 = scheduler.c's formula on the thread's last start + W c, 1 request per "
    "chunk (mbstudy since 2026-11-28), guided = the formula on an MPI_NO_OP read, 2 requests "
    "per chunk (before); the progress request once per chunk when count_done=chunk (mbstudy "
    "since 2026-11-28), per sample when sample (before)); per-thread journal appends (j per "
    "sample); rank 0's merger thread writing the HDF5 file in sample order (m per sample + "
    "merge.c's scans that grow with the journals), its end tail (close with percentiles: per "
    "sample) — not collective HDF5 writes; barriers of iterative drivers (allreduce/broadcast "
    "with polite_wait, the merger waited for); startup (plan) as a constant")


def fmt_table(rows, cols):
    heads = [c[0] for c in cols]
    cells = [[c[1](r) for c in cols] for r in rows]
    widths = [max(len(h), *(len(x[i]) for x in cells)) if cells else len(h)
              for i, h in enumerate(heads)]
    out = ["  ".join(h.rjust(w) for h, w in zip(heads, widths))]
    for x in cells:
        out.append("  ".join(v.rjust(w) for v, w in zip(x, widths)))
    return "\n".join(out)


def pct(x):
    return "%.1f%%" % (100 * x)


COLS = [
    ("dist", lambda r: r["dist"]),
    ("ranks", lambda r: str(r["ranks"])),
    ("thr", lambda r: str(r["threads"])),
    ("samples", lambda r: str(r["samples"])),
    ("batches", lambda r: str(r["batches"])),
    ("policy", lambda r: r["policy"]),
    ("done", lambda r: r["count_done"]),
    ("writer", lambda r: r["writer"]),
    ("wall s", lambda r: "%.4g" % r["wall"]),
    ("eff", lambda r: pct(r["efficiency"])),
    ("eff sched", lambda r: pct(r["efficiency_sched"])),
    ("ctr util", lambda r: pct(r["counter_utilization"])),
    ("merger lag s", lambda r: "%.3g" % r["merger_lag"]),
    ("limiter", lambda r: r["limiter"]),
]


def pivot(results, field="efficiency"):
    """efficiency per rank count (rows) and policy (columns), one table per distribution, size,
    threads, batches and writer; a cell 'a/b/c': with the progress request per chunk (mbstudy's)
    / per sample (mbstudy's before 2026-11-28) / without, those simulated (a policy simulated
    with some of them only: its column is POLICY+DONE/...)"""
    groups = collections.OrderedDict()
    for r in results:
        oneshot = r["batch_spec"] in ("oneshot", "measured")
        size = r["samples"] if oneshot else "%d generations of" % r["batches"]
        key = (r["dist"], size, r["threads"], r["batch_spec"], r["writer"])
        groups.setdefault(key, []).append(r)
    out = []
    for (dist, N, T, bs, wr), rs in groups.items():
        pols = list(collections.OrderedDict.fromkeys(r["policy"] for r in rs))
        dones = [k for k in ("chunk", "sample", "none") if any(r["count_done"] == k for r in rs)]
        pdone = {p: [k for k in dones if any(r["policy"] == p and r["count_done"] == k for r in rs)]
                 for p in pols}
        head = {p: p if pdone[p] == dones else p + "+" + "/".join(pdone[p]) for p in pols}
        ranks = sorted({r["ranks"] for r in rs})
        cell = {}
        for r in rs:
            cell.setdefault((r["ranks"], r["policy"]), {})[r["count_done"]] = r
        rows = []
        for P in ranks:
            row = {"ranks": str(P)}
            for p in pols:
                c = cell.get((P, p), {})
                v = [pct(c[k][field]) if k in c else "-" for k in pdone[p]]
                row[head[p]] = "/".join(v) if c else "-"
            sched = [c["efficiency_sched"] for (PP, p), cc in cell.items() if PP == P
                     for c in cc.values()]
            best = max((c for (PP, p), cc in cell.items() if PP == P for c in cc.values()),
                       key=lambda c: c[field])
            row["best"] = "%s+%s" % (best["policy"], best["count_done"])
            row["limiter"] = best["limiter"]
            rows.append(row)
        cols = [("ranks", lambda r: r["ranks"])] + [(head[p], (lambda p: lambda r: r[p])(head[p]))
                                                    for p in pols] \
            + [("best", lambda r: r["best"]), ("limiter (best)", lambda r: r["limiter"])]
        out.append("# %s: %s, %s %s, %d thread(s) per rank, writer %s (cells: the progress "
                   "request %s, where not in the column's name)" % (
                       field, dist, N, "samples" if bs in ("oneshot", "measured") else
                       "%s samples (W = ranks x threads)" % bs, T, wr,
                       "/".join({"chunk": "per chunk", "sample": "per sample",
                                 "none": "none"}[k] for k in dones)))
        out.append(fmt_table(rows, cols))
        out.append("")
    return "\n".join(out)


def load_calib(path, name):
    """a distribution's calibration from calib.json (and the merger's measured scan costs)"""
    if not path:
        return {}
    with open(path) as f:
        c = json.load(f)
    micro = c.get("_micro", {})
    if micro.get("scan_ns"):
        SCAN_NS.clear()
        SCAN_NS.update({int(k): v for k, v in micro["scan_ns"].items()})
        STRCMP_NS.clear()
        STRCMP_NS.update({int(k): v for k, v in micro["strcmp_ns"].items()})
    return c.get(name, c if "journal" in c else {})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--times", action="append", default=[], metavar="NAME=FILE.h5",
                    help="a distribution: the per-sample times of an mbstudy result file")
    ap.add_argument("--calib", help="calibration JSON (sched_validate.sh's calib.json): per "
                    "distribution name, journal/merge/close/startup seconds")
    ap.add_argument("--ranks", default="1,2,3,64,256,1024,4096,16384")
    ap.add_argument("--threads", default="1", help="threads per rank (a list)")
    ap.add_argument("--samples", default="100000", help="virtual study sizes (a list; 0: as measured)")
    ap.add_argument("--resample", default="bootstrap", choices=["bootstrap", "stretch", "replay"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batches", default="oneshot", help="oneshot, measured, or generation "
                    "sizes (a list: 1024, or 1W / 4W: per worker)")
    ap.add_argument("--generations", type=int, default=0, help="with generation sizes in "
                    "--batches: a fit of this many generations (samples = generations x size)")
    ap.add_argument("--policies", default="guided1,guided,static,roundrobin,dynamic:1,dynamic:4,"
                    "dynamic:16,dynamic:64,dynamic:256,hier", help="a list: guided1 (mbstudy's), "
                    "guided (mbstudy's before 2026-11-28), static, roundrobin, dynamic:K, hier; "
                    "POLICY+DONE fixes its progress request (guided1+chunk: mbstudy's protocol, "
                    "guided+sample: before 2026-11-28), otherwise every one of --count-done")
    ap.add_argument("--count-done", default="chunk,sample,none", help="the progress request: "
                    "chunk (mbstudy's: once per chunk), sample (mbstudy's before 2026-11-28: "
                    "after every sample), none; a list")
    ap.add_argument("--writer", default="merger", help="merger (mbstudy), none, and the "
                    "proposed parallel, pernode; a list")
    for k, v in Model().__dict__.items():
        if isinstance(v, (int, float)) and k not in ("cpu_factor",):
            ap.add_argument("--" + k.replace("_", "-"), type=type(v), default=None,
                            help="model: %s (default %g)" % (k, v))
    ap.add_argument("--cores", type=int, default=0, help="cores of the machine the ranks share "
                    "(0: one per thread): sample times stretched by workers / cores")
    ap.add_argument("--json", help="write every result here")
    ap.add_argument("--check", action="store_true", help="check that every sample is taken once")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--validate", metavar="DIR", help="sched_validate.sh's folder: calibrate "
                    "and compare with the measured runs")
    ap.add_argument("--validate-as", default="guided1+chunk", metavar="POLICY+DONE",
                    help="with --validate: the measured mbstudy's protocol, guided1+chunk "
                    "(since 2026-11-28; the default) or guided+sample (before)")
    a = ap.parse_args(argv)
    if a.validate:
        return validate(a.validate, a.validate_as)
    if not a.times:
        ap.error("--times NAME=FILE.h5 is needed")
    overrides = {k: getattr(a, k) for k in Model().__dict__ if getattr(a, k, None) is not None}
    results = []
    t_all = time.time()
    print("# " + MODEL_NOTE)
    for spec in a.times:
        name, _, path = spec.partition("=")
        if not path:
            name, path = os.path.splitext(os.path.basename(spec))[0], spec
        D = load_times(path)
        cal = load_calib(a.calib, name)
        base = Model(**{k: v for k, v in cal.items() if hasattr(Model(), k)})
        base = base.copy(**overrides)
        tt = D["times"]
        print("# %s: %s: %d samples (%d failed, %d ended early), mean %.4g s, cv %.2f, max/mean %.2f, "
              "%d bytes per record; calibration %s" % (
                  name, path, D["n"], D["failed"], D["ended_early"], tt.mean(), tt.std() / tt.mean(),
                  tt.max() / tt.mean(), D["record_bytes"],
                  {k: base.__dict__[k] for k in ("journal", "merge", "close", "startup")}))
        for Ns in a.samples.split(","):
            N = int(float(Ns)) or D["n"]
            if N == D["n"] and a.resample != "bootstrap" or int(float(Ns)) == 0:
                work = tt                      # as measured, in index order
            else:
                work = virtual(tt, N, a.resample, a.seed)
            for T in [int(x) for x in a.threads.split(",")]:
                for P in [int(x) for x in a.ranks.split(",")]:
                    cpu = 1.0
                    if a.cores:
                        cpu = max(1.0, P * T / a.cores)
                    for bspec in a.batches.split(","):
                        wk = work
                        if a.generations and bspec not in ("oneshot", "measured"):
                            # a fit of G generations of lambda samples each: G x lambda samples
                            lam = gen_size(bspec, P * T)
                            wk = virtual(tt, a.generations * lam, "bootstrap", a.seed)
                        batches = gen_batches(len(wk), bspec, P * T, D["batches"] or [len(wk)])
                        for pol in a.policies.split(","):
                            p = parse_policy(pol.partition("+")[0])
                            cds = (parse_protocol(pol)[1] if "+" in pol else None,)
                            for cd in (cds if cds[0] else a.count_done.split(",")):
                                cache = {}       # the schedule, the same for every writer
                                for wr in a.writer.split(","):
                                    M = base.copy(count_done=cd, writer=wr, cpu_factor=cpu,
                                                  record_bytes=D["record_bytes"])
                                    t0 = time.time()
                                    r = simulate(wk, batches, P, T, p, M, check=a.check,
                                                 cache=cache)
                                    r.update(dist=name, count_done=cd, writer=wr,
                                             batch_spec=bspec, sim_seconds=time.time() - t0,
                                             record_bytes=D["record_bytes"],
                                             model={k: v for k, v in M.__dict__.items()})
                                    r["journal_bandwidth_needed"] = (
                                        D["record_bytes"] * len(wk) / max(r["wall_sched"] - M.startup, 1e-9))
                                    results.append(r)
                                    if not a.quiet:
                                        print(fmt_table([r], COLS).split("\n")[1], flush=True)
    print()
    print(fmt_table(results, COLS))
    print()
    print(pivot(results))
    # the best policy per distribution, size, ranks, threads, batches, writer
    best = {}
    for r in results:
        key = (r["dist"], r["samples"], r["ranks"], r["threads"], r["batch_spec"], r["writer"])
        if key not in best or r["efficiency"] > best[key]["efficiency"]:
            best[key] = r
    print("\n# the best policy (highest predicted efficiency)")
    print(fmt_table(list(best.values()), COLS))
    print("# simulated in %.1f s" % (time.time() - t_all))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"note": MODEL_NOTE, "results": results,
                       "best": list(best.values())}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
