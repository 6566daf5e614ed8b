#!/usr/bin/python3
"""Independent real-time Kubernetes reference (issue 41): a workload scheduled by unmodified
etcd + kube-apiserver + kube-scheduler in real time, built without any of vtime-k8s's conventions.

The control plane is private (etcd, kube-apiserver and kube-scheduler on free loopback ports, in a
private directory, each with its defaults but for what a cluster without kubelets and controllers
needs: the ServiceAccount and TaintNodesByCondition admission plugins off), and the harness is a
small API client of its own (Python's HTTPS, a bearer token; no kubectl, no vtime code): it
writes one Ready Node per host (cpu 1 by default), starts kube-scheduler with the user's
configuration (--scheduler-config, or the default profile), and, from a whole second 5 s after
the scheduler answers its health check, creates each job's Pod at its whole submission second
(jobs due in one second in the workload file's order, one request after the other, as a script
replaying a trace would). Pods are plain: priority 0, no PriorityClass, the job's cpus as request
and limit. A watch of the Pods gives the instant each is bound (its start); it is deleted (grace
period 0) `delay` seconds later (its end). Each real run is repeated (--runs, default 3) to
measure reality's own spread.

With --vtime, the same workload also goes through `vtime k8s` with its default options (twice: the
runs must be identical), and every job's start is compared with the median of the real runs: a
job passes when it is within max(1 s, the real runs' spread) of that median (issue 41's
acceptance). It also prints where each run's back-off flush (kube-scheduler's one-second loop)
fell in the second, read from the jobs it started, and the vtime-k8s --loop-phase that puts
vtime's at the real runs' median when it is more than 0.1 s away: the phase of a real cluster is
wherever its start left it, so a job off by a flush may be the phase, not the model.

usage: k8s_reference.py -w WORKLOAD [--scheduler-config FILE] [--runs N] [--vtime PATH] [--keep DIR]
       [--out FILE.json] [--real-from FILE.json] [--csv FILE] [--plot FILE.png] [--bridge-arg ARG] [--vtime-arg ARG]
exit: 0 done (and with --vtime every job passes), 1 some job off, 2 set-up error.
"""
import argparse
import csv
import heapq
import http.client
import json
import math
import os
import queue
import re
import shutil
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference_report as report  # noqa: E402 (the job-by-job comparison, CSV and figure)
from slurm_validation import free_ports  # noqa: E402

NAMESPACE = "default"
SETTLE_S = 5
TOKEN = "k8s-reference"


class SetupError(Exception):
    pass


def log(msg):
    print(msg, flush=True)


def k8s_bin_dir():
    """Where install-kubernetes left kube-apiserver and kube-scheduler (as vtime-k8s looks)."""
    if os.environ.get("VTIME_K8S_BIN"):
        return os.environ["VTIME_K8S_BIN"]
    cache = os.environ.get("VTIME_K8S_CACHE") or "/var/cache/vtime/kubernetes-1.20.2"
    if os.path.exists(os.path.join(cache, "bin", "kube-scheduler")):
        return os.path.join(cache, "bin")
    found = shutil.which("kube-scheduler")
    return os.path.dirname(found) if found else None


def load_workload(path):
    """Jobs of a Batsim workload: id, subtime, res (a Pod's cpus), delay. Only delay profiles."""
    try:
        with open(path) as f:
            wl = json.load(f)
    except (OSError, ValueError) as e:
        raise SetupError("workload %s: %s" % (path, e))
    profiles = wl.get("profiles", {})
    jobs = []
    for j in wl.get("jobs", []):
        p = profiles.get(j.get("profile"))
        if not p or p.get("type") != "delay":
            raise SetupError("workload %s: job %s: only delay profiles can be timed by the harness" % (path, j.get("id")))
        if int(j["res"]) != 1:
            raise SetupError("workload %s: job %s asks for %s hosts; a Pod runs on one Node" % (path, j["id"], j["res"]))
        jobs.append({"id": str(j["id"]), "subtime": float(j["subtime"]), "res": 1, "delay": float(p["delay"])})
    if not jobs:
        raise SetupError("workload %s has no jobs" % path)
    return jobs, int(wl.get("nb_res", 0))


def scheduler_config(user_path, health):
    """The user's KubeSchedulerConfiguration with where the API is, no leader election and the
    run's ports added (the keys vtime-k8s adds too; the user may not set them)."""
    text = "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\n"
    if user_path:
        with open(user_path) as f:
            text = f.read()
        for key in ("clientConnection", "leaderElection", "healthzBindAddress", "metricsBindAddress"):
            if re.search(r"^%s:" % key, text, re.M):
                raise SetupError("%s: %s is set by the harness" % (user_path, key))
        if not text.endswith("\n"):
            text += "\n"
    return text + ("clientConnection:\n  kubeconfig: kubeconfig\nleaderElection:\n  leaderElect: false\n"
                   "healthzBindAddress: %s\nmetricsBindAddress: %s\n" % (health, health))


class Api:
    """A plain API client: HTTPS to kube-apiserver with a bearer token, one kept-alive connection."""

    def __init__(self, port):
        self.port = port
        self.ctx = ssl.create_default_context()
        self.ctx.check_hostname = False
        self.ctx.verify_mode = ssl.CERT_NONE
        self.conn = None

    def connect(self, timeout=30):
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=timeout)

    def request(self, method, path, body=None):
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = self.connect()
            try:
                headers = {"Authorization": "Bearer " + TOKEN, "Accept": "application/json"}
                if body is not None:
                    headers["Content-Type"] = "application/json"
                self.conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
                r = self.conn.getresponse()
                data = r.read()
                return r.status, data
            except (OSError, http.client.HTTPException):
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
        return None

    def must(self, method, path, body, want, what):
        status, data = self.request(method, path, body)
        if status not in want:
            raise SetupError("%s: the API answered %d: %s" % (what, status, data[:300].decode(errors="replace")))
        return data


def node(name, cpus):
    res = {"cpu": str(cpus), "memory": "1Ti", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": res, "allocatable": res,
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "message": "no kubelet: a Node of the reference harness"}]}}


def pod(name, cpus):
    res = {"cpu": str(cpus)}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "job", "image": "reference/job",
                                     "resources": {"requests": res, "limits": res}}],
                     "restartPolicy": "Never", "terminationGracePeriodSeconds": 0}}


class Watch(threading.Thread):
    """Pods' watch: the first instant each Pod is seen bound, handed to the main loop."""

    def __init__(self, api, rv, out):
        super().__init__(daemon=True)
        self.conn = api.connect(timeout=None)
        self.conn.request("GET", "/api/v1/namespaces/%s/pods?watch=1&resourceVersion=%s" % (NAMESPACE, rv),
                          headers={"Authorization": "Bearer " + TOKEN})
        self.resp = self.conn.getresponse()
        if self.resp.status != 200:
            raise SetupError("cannot watch pods: %d" % self.resp.status)
        self.out = out
        self.seen = set()
        self.error = None

    def run(self):
        try:
            while True:
                line = self.resp.readline()
                if not line:
                    self.error = "the pod watch ended"
                    self.out.put(None)
                    return
                now = time.time()
                e = json.loads(line)
                o = e.get("object", {})
                name = o.get("metadata", {}).get("name")
                where = o.get("spec", {}).get("nodeName")
                if e.get("type") in ("ADDED", "MODIFIED") and where and name not in self.seen:
                    self.seen.add(name)
                    self.out.put((now, name, where))
        except Exception as e:  # the main loop reports it
            self.error = "the pod watch failed: %s" % e
            self.out.put(None)


class Cluster:
    """etcd, kube-apiserver and kube-scheduler in real time, in directory d."""

    def __init__(self, d, bin_dir, etcd, sched_conf, hosts, cpus, sched_v=2):
        self.d, self.bin, self.etcd, self.sched_conf, self.hosts, self.cpus = d, bin_dir, etcd, sched_conf, hosts, cpus
        self.sched_v = sched_v
        self.procs = []

    def spawn(self, name, argv):
        out = open(os.path.join(self.d, "log", name + ".log"), "w")
        p = subprocess.Popen(argv, cwd=self.d, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        out.close()
        self.procs.append((name, p))
        return p

    def check_alive(self):
        for name, p in self.procs:
            if p.poll() is not None:
                with open(os.path.join(self.d, "log", name + ".log"), errors="replace") as f:
                    tail = f.read()[-1500:]
                raise SetupError("%s exited with %s:\n%s" % (name, p.returncode, tail))

    def wait_until(self, what, ready, timeout=120):
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            self.check_alive()
            try:
                if ready():
                    return
            except (OSError, http.client.HTTPException):
                pass
            time.sleep(0.1)
        raise SetupError("timed out waiting for %s (logs in %s/log)" % (what, self.d))

    def start(self):
        for sub in ("log", "etcd", "certs"):
            os.makedirs(os.path.join(self.d, sub), exist_ok=True)
        base = free_ports(5)
        etcd, peer, api, sched, health = base, base + 1, base + 2, base + 3, base + 4
        with open(os.path.join(self.d, "tokens.csv"), "w") as f:
            f.write("%s,reference,reference,system:masters\n" % TOKEN)
        with open(os.path.join(self.d, "kubeconfig"), "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: r\n  cluster:\n    server: https://127.0.0.1:%d\n"
                    "    insecure-skip-tls-verify: true\nusers:\n- name: r\n  user:\n    token: %s\ncontexts:\n"
                    "- name: r\n  context:\n    cluster: r\n    user: r\ncurrent-context: r\n" % (api, TOKEN))
        url = "http://127.0.0.1:%d"
        self.spawn("etcd", [self.etcd, "--name", "r", "--data-dir", "etcd", "--listen-client-urls", url % etcd,
                            "--advertise-client-urls", url % etcd, "--listen-peer-urls", url % peer,
                            "--initial-advertise-peer-urls", url % peer, "--initial-cluster", "r=" + url % peer,
                            "--listen-metrics-urls", "", "--log-level", "warn"])
        key = os.path.join("certs", "sa.key")
        r = subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key],
                           cwd=self.d, capture_output=True, text=True)
        if r.returncode != 0:
            raise SetupError("openssl: %s" % r.stderr.strip())
        self.spawn("kube-apiserver", [
            os.path.join(self.bin, "kube-apiserver"), "--etcd-servers=" + url % etcd, "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1", "--secure-port=%d" % api, "--cert-dir=certs",
            "--token-auth-file=tokens.csv", "--authorization-mode=AlwaysAllow",
            # No controller-manager makes service accounts and no kubelet clears the not-ready taint.
            "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
            "--service-cluster-ip-range=10.0.0.0/24", "--service-account-issuer=https://kubernetes.default.svc",
            "--service-account-signing-key-file=" + key, "--service-account-key-file=" + key])
        self.api = Api(api)
        self.wait_until("kube-apiserver to be ready", lambda: self.api.request("GET", "/readyz")[0] == 200)
        self.wait_until("the default namespace",
                        lambda: self.api.request("GET", "/api/v1/namespaces/" + NAMESPACE)[0] == 200)
        for h in range(self.hosts):
            self.api.must("POST", "/api/v1/nodes", node("host%d" % h, self.cpus), (201,), "creating node host%d" % h)
        with open(os.path.join(self.d, "scheduler-config.yaml"), "w") as f:
            f.write(scheduler_config(self.sched_conf, "127.0.0.1:%d" % health))
        self.spawn("kube-scheduler", [os.path.join(self.bin, "kube-scheduler"), "--config=scheduler-config.yaml",
                                      "--secure-port=%d" % sched, "--bind-address=127.0.0.1",
                                      "--v=%d" % self.sched_v])

        def healthy():
            with urllib.request.urlopen("http://127.0.0.1:%d/healthz" % health, timeout=2) as r:
                return r.status == 200
        self.wait_until("kube-scheduler to be healthy", healthy)

    def stop(self):
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def start_cluster(d, bin_dir, a, hosts):
    """A started Cluster in d. Free ports are picked before the components bind them, so another
    program may take one meanwhile: such a start is tried again with other ports (twice)."""
    for attempt in range(3):
        c = Cluster(os.path.join(d, "try%d" % attempt) if attempt else d, bin_dir, a.etcd, a.scheduler_config, hosts,
                    a.node_cpus, a.scheduler_v)
        os.makedirs(c.d, exist_ok=True)
        try:
            c.start()
            return c
        except SetupError as e:
            c.stop()
            if "address already in use" not in str(e) or attempt == 2:
                raise
            log("  a port was taken meanwhile; starting again with others")
    return None


def flush_phase(run, subtimes, window=0.2, latency=0.015):
    """Where a run's back-off flush fell in each second, read from the jobs it started. `run` maps
    each job to its (start, end), `subtimes` to its submission. A Pod bound on its submission or
    on another job's end (its deletion frees a Node) is bound within tens of ms of it (over 100 ms
    for the last of a burst); one bound more than `window` s after both was moved by the flush,
    kube-scheduler's one-second loop, and was bound at the flush's own point of the second.
    Returns None without such a start, else a dict: the flush starts as (instant, fraction of its
    second), the drift per second (the median slope between starts at least 10 s apart, unwrapped
    around the second; None when they are under 30 s apart) and the phase at the workload's origin
    (the median of the fractions less the drift since the origin, less `latency`, the binding's
    share; comparable between runs)."""
    ends = [e for _, e in run.values()]

    def caused(job, t):
        if 0 <= t - subtimes[job] < window:
            return True
        return any(0 <= t - e < window for e in ends)
    pts = sorted((t, t - math.floor(t)) for job, (t, _) in run.items() if not caused(job, t))
    if not pts:
        return None
    ys = [pts[0][1]]
    for _, f in pts[1:]:
        while f - ys[-1] > 0.5:
            f -= 1.0
        while f - ys[-1] < -0.5:
            f += 1.0
        ys.append(f)
    ts = [t for t, _ in pts]
    drift = None
    if ts[-1] - ts[0] >= 30:
        drift = statistics.median_high((ys[j] - ys[i]) / (ts[j] - ts[i]) for i in range(len(ts))
                                       for j in range(i + 1, len(ts)) if ts[j] - ts[i] >= 10)
    origin = (statistics.median_high(y - (drift or 0.0) * t for t, y in zip(ts, ys)) - latency) % 1.0
    return {"starts": pts, "drift": drift, "origin": origin}


def describe_flush(ph):
    if ph is None:
        return "no job started by a flush (every start within 0.2 s of its submission or of an end)"
    (t0, f0), (t1, f1) = ph["starts"][0], ph["starts"][-1]
    text = "%d flush start%s, %.2f s into the second at %.0f s" % (len(ph["starts"]), "s"[:len(ph["starts"]) > 1], f0, t0)
    if len(ph["starts"]) > 1:
        text += " to %.2f s at %.0f s" % (f1, t1)
    if ph["drift"] is not None:
        text += " (drifting %.2f ms/s)" % (ph["drift"] * 1000)
    return text


def report_flush(jobs, real, vt_batsim, bridge_args):
    """Print each run's back-off flush phase and, when vtime's is far from the real runs', the
    --loop-phase that would place it at theirs: the phase is whatever a real scheduler's start
    left (docs/k8s.md), so a job off by a flush may be the phase, not the model."""
    log("\nback-off flush (kube-scheduler's one-second loop), from the jobs it started:")
    subtimes = {j["id"]: j["subtime"] for j in jobs}
    origins = []
    for i, run in enumerate(real):
        ph = flush_phase(run, subtimes)
        log("  real run %d: %s" % (i + 1, describe_flush(ph)))
        if ph:
            origins.append(ph["origin"])
    vt = flush_phase(vt_batsim, subtimes)
    log("  vtime:      %s" % describe_flush(vt))
    if not origins or vt is None or any(b.startswith("--loop-phase") for b in bridge_args):
        return
    # The real runs' median phase at the origin, on the circle around vtime's.
    delta = statistics.median_high(((o - vt["origin"] + 0.5) % 1.0) - 0.5 for o in origins)
    if abs(delta) > 0.1:
        log("  vtime's flush falls %.2f s %s in the second than the real runs' (a real cluster's phase is wherever "
            "its start left it); to compare at theirs: --bridge-arg=--loop-phase=%dms"
            % (abs(delta), "earlier" if delta > 0 else "later", round(((0.5 + delta) % 1.0) * 1000)))


def real_run(jobs, hosts, a, bin_dir, work, tag):
    d = os.path.join(work, tag)
    os.makedirs(d, exist_ok=True)
    c = None
    try:
        c = start_cluster(d, bin_dir, a, hosts)
        status, data = c.api.request("GET", "/api/v1/namespaces/%s/pods" % NAMESPACE)
        rv = json.loads(data)["metadata"]["resourceVersion"]
        bound = queue.Queue()
        watch = Watch(c.api, rv, bound)
        watch.start()
        origin = math.floor(time.time()) + SETTLE_S
        subs = [(origin + math.floor(j["subtime"]), i) for i, j in enumerate(jobs)]  # file order within a second
        job_of = {"job-%s" % j["id"]: j for j in jobs}
        ends = []          # heap of (instant, pod)
        out, lags = {}, []
        starts, done = {}, 0
        last_note = time.monotonic()
        si = 0
        while done < len(jobs):
            c.check_alive()
            due = ([subs[si][0]] if si < len(subs) else []) + ([ends[0][0]] if ends else [])
            nxt = min(due) if due else time.time() + 1  # nothing due: waiting for bindings
            try:
                ev = bound.get(timeout=max(0.0, min(nxt - time.time(), 1.0)))
                if ev is None:
                    raise SetupError(watch.error)
                t, name, _where = ev
                j = job_of.get(name)
                if j and name not in starts:
                    starts[name] = t
                    heapq.heappush(ends, (t + j["delay"], name))
                continue
            except queue.Empty:
                pass
            now = time.time()
            if ends and ends[0][0] <= now and (si >= len(subs) or ends[0][0] <= subs[si][0]):
                t, name = heapq.heappop(ends)
                c.api.must("DELETE", "/api/v1/namespaces/%s/pods/%s" % (NAMESPACE, name),
                           {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0}, (200, 202),
                           "deleting pod " + name)
                j = job_of[name]
                out[j["id"]] = (starts[name] - origin, time.time() - origin)
                done += 1
            elif si < len(subs) and subs[si][0] <= now:
                due, i = subs[si]
                si += 1
                j = jobs[i]
                lags.append(time.time() - due)
                c.api.must("POST", "/api/v1/namespaces/%s/pods" % NAMESPACE, pod("job-%s" % j["id"], j["res"]),
                           (201,), "creating pod for job " + j["id"])
            if time.monotonic() - last_note >= 15:
                last_note = time.monotonic()
                log("  real %s: %d of %d submitted, %d started, %d finished, %.0f s since the origin"
                    % (tag, si, len(jobs), len(starts), done, time.time() - origin))
        log("  real %s: submissions late by at most %.3f s" % (tag, max(lags)))
        return out
    finally:
        if c:
            c.stop()


def vtime_run(vtime, wl, a, hosts, work, tag):
    prefix = os.path.join(work, tag)
    cmd = [vtime, "k8s", "--hosts", str(hosts), "-w", wl, "-e", prefix, "-q"]
    if a.scheduler_config:
        cmd += ["--scheduler-config", a.scheduler_config]
    cmd += list(a.vtime_arg)
    if a.node_cpus != 1 or a.bridge_arg:
        cmd += ["--"] + (["--node-cpus", str(a.node_cpus)] if a.node_cpus != 1 else []) + list(a.bridge_arg)
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        raise SetupError("vtime k8s exited %d:\n%s" % (r.returncode, r.stderr.strip()[-3000:]))
    out = {}
    with open(prefix + "_jobs.csv") as f:
        for row in csv.DictReader(f):
            out[row["job_id"]] = (float(row["starting_time"]), float(row["finish_time"]))
    return {"batsim": out, "wall": time.monotonic() - t0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    report.add_options(ap, "k8s")
    ap.add_argument("--scheduler-config", metavar="FILE", help="a KubeSchedulerConfiguration (default profile without)")
    ap.add_argument("--hosts", type=int, default=0, help="Nodes (default: the workload's nb_res)")
    ap.add_argument("--node-cpus", type=int, default=1, help="each Node's cpus (default 1)")
    ap.add_argument("--etcd", default=shutil.which("etcd") or "etcd", help="etcd's executable")
    ap.add_argument("--scheduler-v", type=int, default=2, choices=range(0, 11), metavar="N",
                    help="the real kube-scheduler's log verbosity (default 2, as vtime-k8s's; with --keep, 3 logs "
                         "each attempt and each Pod event, what decides which Pod takes a freed Node; a higher one "
                         "slows the real scheduler down)")
    a = ap.parse_args()
    bin_dir = k8s_bin_dir()
    if not bin_dir:
        log("k8s_reference: kube-apiserver/kube-scheduler not found (k8s/install-kubernetes builds them)")
        return 2
    if not shutil.which(a.etcd):
        log("k8s_reference: etcd is not installed (Debian: etcd-server)")
        return 2
    work = os.path.abspath(a.keep) if a.keep else tempfile.mkdtemp(prefix="vtime-k8s-reference-")
    os.makedirs(work, exist_ok=True)
    try:
        jobs, nb_res = load_workload(a.workload)
        hosts = a.hosts or nb_res
        if hosts <= 0:
            raise SetupError("how many Nodes? the workload has no nb_res: give --hosts")
        if a.scheduler_config:
            scheduler_config(a.scheduler_config, "x")  # refused before anything starts
        log("workload %s: %d jobs on %d Nodes; %d real-time runs" % (a.workload, len(jobs), hosts, a.runs))
        real = []
        if a.real_from:
            _, real = report.load_real(a.real_from)
            a.runs = 0
            log("  %d real runs from %s" % (len(real), a.real_from))
        for i in range(a.runs):
            t0 = time.monotonic()
            real.append(real_run(jobs, hosts, a, bin_dir, work, "real%d" % (i + 1)))
            log("  real run %d of %d: %.0f s" % (i + 1, a.runs, time.monotonic() - t0))
        result = {"workload": os.path.abspath(a.workload), "scheduler_config": a.scheduler_config, "real": real}
        status = 0
        if a.vtime:
            vt = [vtime_run(os.path.abspath(a.vtime), a.workload, a, hosts, work, "vtime%d" % k) for k in (1, 2)]
            same = vt[0]["batsim"] == vt[1]["batsim"]
            result["vtime"] = [v["batsim"] for v in vt]
            report_flush(jobs, real, vt[0]["batsim"], a.bridge_arg)
            status = report.report(a, jobs, real, vt[0]["batsim"], vt[0]["batsim"], same, vt[0]["wall"],
                                   a.scheduler_config or "default profile", "k8s_reference")
        report.save(a.out, result)
        return status
    except SetupError as e:
        log("k8s_reference: set-up error: %s" % e)
        return 2
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
