"""`archive-profiler nightly`: keep an archive's profile fresh, unattended.

A night: take the lock, tidy what a killed run left, find the inputs that are new, changed or
gone since the state was last committed, then either

- fold: profile only the new inputs and merge them into the published profile, when none of
  their URI-Rs and digests was seen before (the result is exact: the same numbers as a profile
  of all inputs made from scratch);
- approximate (``on_overlap: approximate``): the same merge when some were seen before, with
  bounds on exactly the keys those captures touch; revisits whose original may be in an
  earlier night force a rebuild, and so does a profile that has carried bounds for
  ``max_approximate_nights`` nights;
- rebuild: profile every input from scratch (first night, changed or removed inputs, another
  policy, or ``on_overlap: rebuild``).

The new profile is validated, published as a dated version beside a change report, committed
in the state (the one atomic step that makes it current), and linked as NAME-latest.cdxj.
Anything that fails before the commit leaves the published profile and the state untouched.
"""

import contextlib
import datetime
import logging
import os
import time

from profiler import jsonnum
from profiler.errors import RunError, UserError
from profiler.files.validate import validate
from profiler.formats import inputs as inputs_mod
from profiler.model.policy import load as load_policy
from profiler.nightly import changes, fold as fold_mod, ownership, publish, sets
from profiler.nightly.lock import LockHeld, RunLock, describe
from profiler.nightly.state import State, compare_inputs, fingerprint

log = logging.getLogger("archive-profiler")
RUN_LOG = "runs.jsonl"
#: test hook: the name of a stage at which the run stops and waits (to be killed)
STALL_ENV = "ARCHIVE_PROFILER_NIGHTLY_STALL"


class ValidationFailed(RunError):
    """The new profile did not validate: nothing was published."""


def _checkpoint(stage):
    if os.environ.get(STALL_ENV) == stage:
        log.warning("stalling at stage %s (%s is set)", stage, STALL_ENV)
        print("STALLED %s" % stage, flush=True)
        time.sleep(3600)


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def _cpu():
    """CPU seconds of this process and of its finished children (the local runner's tasks)."""
    own = os.times()
    return own.user + own.system + own.children_user + own.children_system


def _iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class Night:
    """One nightly run for a NightlyConfig; ``run()`` returns the run record (also logged)."""

    def __init__(self, config, progress=False):
        self.config = config
        self.progress = progress    # a progress bar on stderr while profiling (profiler.job.progress)
        self.state = State(config.state_dir)
        self.work = None        # made by run(): a marked folder in the state folder
        self.sets_dir = os.path.join(config.state_dir, "sets")
        self.ledger = ownership.SetsLedger(config.state_dir, self.sets_dir)
        self.record = {}

    @contextlib.contextmanager
    def _phase(self, name):
        """Adds the CPU and wall seconds of a phase (this process and the tasks it waited for)."""
        t, c = time.monotonic(), _cpu()
        try:
            yield
        finally:
            timings = self.record.setdefault("timings", {})
            wall, cpu = timings.get(name, (0, 0))
            timings[name] = (round(wall + time.monotonic() - t, 2), round(cpu + _cpu() - c, 2))

    # ------------------------------------------------------------ the run

    def run(self):
        c = self.config
        started = _now()
        self.record = {"started": _iso(started), "config": os.path.abspath(c.source)}
        try:
            for folder in (c.output_dir, c.state_dir, self.sets_dir):
                try:
                    os.makedirs(folder, exist_ok=True)
                except OSError as e:
                    raise UserError("cannot make the folder %s: %s" % (folder, e.strerror or e))
            with RunLock(c.state_dir) as lock:
                if lock.stale:
                    log.warning("took over a stale lock left by a run that died (%s)", describe(lock.stale))
                    self.record["stale_lock"] = lock.stale
                ownership.claim_output(c.output_dir, c.name, c.state_dir)
                self.state.load()
                self._recover()
                self.work = ownership.make_work_folder(c.state_dir)
                try:
                    self._night(started)
                finally:
                    ownership.remove_work_folder(self.work)
        except BaseException as e:
            self.record.setdefault("status", "locked" if isinstance(e, LockHeld) else "failed")
            self.record["error"] = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise
        finally:
            self.record["seconds"] = round((_now() - started).total_seconds(), 2)
            self._log_run()
        return self.record

    def _log_run(self):
        try:
            with open(os.path.join(self.config.state_dir, RUN_LOG), "ab") as f:
                f.write(jsonnum.dumps(self.record) + b"\n")
        except OSError as e:
            log.warning("could not append to the run log: %s", e)

    def _recover(self):
        """Remove what a killed run left; point NAME-latest at the committed version."""
        c, current = self.config, self.state.current
        removed = publish.remove_temp_files(c.output_dir, c.name) + ownership.remove_work_folders(c.state_dir)
        if current:
            self.ledger.adopt((current["urirs"], current["digests"]))     # named by the committed state
            removed += publish.prune(c.output_dir, c.name, set(self.state.versions))
            removed += self.ledger.prune((current["urirs"], current["digests"]))
            for suffix, target in ((".cdxj", current["profile"]), (".ukvs", current.get("map"))):
                if target and publish.latest_target(c.output_dir, c.name, suffix) != target:
                    publish.point_latest(c.output_dir, c.name, target, suffix)
                    log.warning("recovered: %s-latest%s points at %s again", c.name, suffix, target)
                    self.record["recovered_link"] = True
        if removed:
            log.warning("recovered: removed %d file(s) a killed run left", len(removed))
            self.record["recovered_files"] = len(removed)

    # ------------------------------------------------------------ planning

    def _inputs(self, started):
        """{path: fingerprint} of this night's settled local inputs, and the files still settling."""
        c = self.config
        files, own = ownership.not_own_files(inputs_mod.resolve(c.inputs), c.output_dir, c.name, c.state_dir)
        if own:
            log.warning("%d input file(s) are this config's own outputs or state, not read (first: %s)",
                        len(own), own[0])
        remote = [f for f in files if "://" in f]
        if remote:
            raise UserError("nightly takes local inputs only (it fingerprints them): %s" % remote[0])
        current, settling = {}, []
        limit = started.timestamp() - c.settle_seconds
        for path in files:
            fp = fingerprint(path, c.detect_changes == "checksum")
            if c.settle_seconds and fp["mtime_ns"] / 1e9 > limit:
                settling.append(path)
                if path in self.state.inputs:       # being rewritten: as it was, until it settles
                    current[path] = self.state.inputs[path]
            else:
                current[path] = fp
        return current, settling

    def _night(self, started):
        c, state = self.config, self.state
        pol = load_policy(c.policy)
        self.policy = pol
        identity = c.identity(pol.to_dict())
        current, settling = self._inputs(started)
        if settling:
            log.info("%d input(s) modified in the last %d s are left for the next run", len(settling),
                     c.settle_seconds)
        new, changed, removed = compare_inputs(state.inputs, current)
        self.record.update(inputs=len(current), new_inputs=len(new), changed_inputs=len(changed),
                           removed_inputs=len(removed), settling_inputs=len(settling))
        prev = state.current
        old_profile = os.path.join(c.output_dir, prev["profile"]) if prev else None
        reasons = []
        if not prev:
            reasons.append("first run")
        else:
            if state.data.get("identity") != identity:
                reasons.append("policy, revisit handling, language detection or archive URI changed")
            if changed:
                reasons.append("%d input(s) changed" % len(changed))
            if removed:
                reasons.append("%d input(s) removed" % len(removed))
            if prev.get("approximate_nights", 0) >= c.max_approximate_nights and \
                    len(prev.get("exact", ())) < len(fold_mod.FEATURES):
                reasons.append("the profile has carried bounds for %d night(s) (max_approximate_nights)"
                               % prev["approximate_nights"])
            if not os.path.isfile(old_profile):
                reasons.append("the published profile %s is missing" % prev["profile"])
        if not reasons and not new:
            self.record.update(status="unchanged", mode="none", version=prev["stamp"],
                               profile=old_profile, exact=prev.get("exact"))
            log.info("nothing new since %s", prev["stamp"])
            return
        if not current:
            raise UserError("no input files (all %d still settling)" % len(settling) if settling
                            else "no input files")
        out = os.path.join(self.work, "profile.cdxj")
        if reasons:
            built = self._rebuild(current, out, reasons)
        else:
            built = self._delta(new, current, old_profile, out)
        _checkpoint("profiled")
        self._check(out, built)
        self._publish(out, built, old_profile, current, identity)

    # ------------------------------------------------------------ building

    def _profile(self, files, out, runner=None):
        """Profile files into out with the config's runner and its mrjob settings, or with another
        runner (then without them: they belong to the configured runner)."""
        from profiler.run.profile import run_profile
        c = self.config
        own = runner in (None, c.runner)
        with self._phase("profile"):
            return run_profile(list(files), out, policy=self.policy, runner=runner or c.runner,
                               conf_paths=c.mrjob_conf if own else (), archive_uri=c.archive_uri,
                               resolve_revisits=c.resolve_revisits, split_size=c.split_size,
                               cores=c.cores if own else None, extra_args=c.mrjob_args if own else (),
                               progress=self.progress, detect_language=c.detect_language)

    def _usable(self, files):
        infos = [inputs_mod.sniff(f) for f in files]
        return [i["path"] for i in infos if i["format"]], \
            [{"path": i["path"], "reason": i["reason"]} for i in infos if not i["format"]]

    def _rebuild(self, current, out, reasons, night=None):
        """Profile every input. With night, (the new inputs' scan, the kept sets merged with its
        sets) when nothing changed or was removed, those are the sets; otherwise every input is
        scanned."""
        log.info("rebuilding from all %d input(s): %s", len(current), "; ".join(reasons))
        files = sorted(current)
        self._profile(files, out)
        if night is None:
            with self._phase("scan"):
                scan = sets.Scan(self.work).run(files, self.config.split_size, progress=self._progress("scanning"),
                                                detect_language=self._detecting())
            urirs, digests = self._write_sets(None, scan)
        else:
            scan, (urirs, digests) = night
        return {"mode": "rebuild", "reason": "; ".join(reasons), "urirs": urirs, "digests": digests,
                "exact": list(fold_mod.FEATURES), "approximate_nights": 0,
                "night_captures": scan.captures}

    def _delta(self, new, current, old_profile, out):
        c, prev = self.config, self.state.current
        captures_path = os.path.join(self.work, "captures.cdxj")
        with self._phase("scan"):
            scan = sets.Scan(self.work, captures_path, pairs=True).run(
                new, c.split_size, progress=self._progress("scanning"), detect_language=self._detecting())
        seen_urirs, seen_digests = set(), set()
        night_sets = self._write_sets(prev, scan, {"urirs": seen_urirs, "digests": seen_digests})
        log.info("%d new input(s): %d captures; %d of their URI-Rs and %d digests were seen before",
                 len(new), scan.captures, len(seen_urirs), len(seen_digests))
        self.record.update(seen_urirs=len(seen_urirs), seen_digests=len(seen_digests))
        mode, why = "fold", "new URI-Rs and digests only"
        if seen_urirs or seen_digests:
            overlap = "%d URI-R(s) and %d digest(s) seen on earlier nights" % (len(seen_urirs), len(seen_digests))
            if c.on_overlap == "rebuild":
                return self._rebuild(current, out, [overlap], (scan, night_sets))
            if c.resolve_revisits and any(u in seen_urirs and d in seen_digests for u, d in scan.pairs):
                return self._rebuild(current, out, [overlap + ", some with a URI-R's digest seen before "
                                                    "(a revisit's original may be in an earlier night)"],
                                     (scan, night_sets))
            mode, why = "approximate", overlap
        usable, unusable = self._usable(new)
        delta = None
        if usable:
            delta = os.path.join(self.work, "delta.cdxj")
            self._profile(usable, delta, c.delta_runner)
        # an exact fold (nothing seen before) selects no captures: no pass over the captures file
        keys_urir = self._subset_keys(captures_path, lambda u, d: u in seen_urirs, "urir") \
            if seen_urirs else frozenset()
        keys_digest = self._subset_keys(captures_path, lambda u, d: d in seen_digests, "digest") \
            if seen_digests else frozenset()
        old_run, old_about = fold_mod.run_meta(old_profile)
        runs = [old_run] + ([fold_mod.run_meta(delta)[0]] if delta else [])
        exact = fold_mod.exact_after(old_about, keys_urir, keys_digest)
        header = fold_mod.headers(runs, old_about, c.archive_uri, self.policy.to_dict(),
                                  c.resolve_revisits, exact, extra_skipped_files=unusable,
                                  language_detection=self._detection_meta())
        try:
            with self._phase("fold"):
                counts = fold_mod.fold(old_profile, delta, out, header, keys_urir, keys_digest)
        except UserError as e:     # the published file was damaged since: start again from the inputs
            return self._rebuild(current, out, ["the published profile cannot be read (%s)"
                                                % str(e).splitlines()[0]], (scan, night_sets))
        log.info("folded into %s: %d lines, %d merged, %d with bounds", prev["profile"], counts["lines"],
                 counts["merged"], counts["bounded"])
        urirs, digests = night_sets
        approximate = len(exact) < len(fold_mod.FEATURES)
        return {"mode": mode, "reason": why, "urirs": urirs, "digests": digests, "exact": exact,
                "approximate_nights": prev.get("approximate_nights", 0) + 1 if approximate else 0,
                "night_captures": scan.captures, "bounded_keys": counts["bounded"],
                "expected_captures": old_run.get("captures", 0) + scan.captures}

    def _detecting(self):
        """Whether the night's scan detects languages: detect_language, with a policy that has lang."""
        from profiler.model import criteria
        return self.config.detect_language and criteria.LANG.name in self.policy.names

    def _detection_meta(self):
        """The detector a profile's header records (profiler.model.detect.meta), or None."""
        if not self._detecting():
            return None
        from profiler.model.detect import meta
        return meta()

    def _subset_keys(self, captures_path, keep, what):
        """The keys the night's captures selected by keep(urlkey, digest) touch (a profile of them)."""
        subset = os.path.join(self.work, "subset-%s.cdxj" % what)
        if not sets.write_subset(captures_path, subset, keep):
            return frozenset()
        profiled = subset + ".profile"
        self._profile([subset], profiled, runner="inline")
        return fold_mod.profile_keys(profiled)

    def _write_sets(self, prev, scan, common=None):
        """The kept URI-R and digest sets (of prev; None: none) merged with the scan's; common:
        {what: set} to which the scan's items the kept sets hold are added, in the same pass."""
        names = []
        for what, found in (("urirs", scan.urirs), ("digests", scan.digests)):
            tmp = os.path.join(self.work, what + ".gz")
            old = os.path.join(self.sets_dir, prev[what]) if prev else None
            with self._phase("sets"):
                n = sets.union(old, found.sorted_items(), tmp, common and common[what])
            self.record[what] = n
            names.append(tmp)
        return names

    def _progress(self, what):
        last = [0.0]

        def report(n, total):
            if time.monotonic() - last[0] > 10 or n == total:
                last[0] = time.monotonic()
                log.info("%s: %d/%d split(s)", what, n, total)
        return report

    # ------------------------------------------------------------ checking and publishing

    def _check(self, out, built):
        with self._phase("validate"):
            report = validate(out)
        if not report.ok:
            first = report.problems[0]
            raise ValidationFailed("the new profile did not validate (%d problem(s), first: line %s: %s); "
                                   "nothing published" % (report.count, first.lineno, first.message))
        run, _ = fold_mod.run_meta(out)
        expected = built.get("expected_captures")
        if expected is not None and run.get("captures") != expected:
            raise ValidationFailed("the folded profile holds %s captures, not the %d expected; nothing "
                                   "published" % (run.get("captures"), expected))
        self.record.update(captures=run.get("captures"), lines=report.data_lines)

    def _publish(self, out, built, old_profile, current, identity):
        c, state = self.config, self.state
        stamp = publish.stamp(taken=set(state.versions))
        final = publish.version_path(c.output_dir, c.name, stamp)
        publish.place(out, final)
        set_names = []
        for what, tmp in zip(("urirs", "digests"), (built["urirs"], built["digests"])):
            name = "%s-%s.gz" % (what, stamp)
            self.ledger.record(name)
            publish.place(tmp, os.path.join(self.sets_dir, name))
            set_names.append(name)
        if c.report:
            paths = [publish.version_path(c.output_dir, c.name, stamp, s) for s in (".changes.json", ".changes.md")]
            with self._phase("report"):
                try:
                    report = changes.write(old_profile, final, *paths)
                except UserError as e:
                    log.warning("the change report compares with nothing: %s", e)
                    report = changes.write(None, final, *paths, note="the previous profile cannot be read (%s)" % e)
            self.record["changes"] = {"new_hosts": report["new_hosts"]["count"],
                                      "vanished_keys": report["keys"]["vanished"],
                                      "appeared_keys": report["keys"]["appeared"]}
        map_path = None
        if c.mementomap:
            from profiler.files.ukvs import KEY_CHOICES, profile_to_map
            map_path = publish.version_path(c.output_dir, c.name, stamp, ".ukvs")
            with self._phase("mementomap"):
                profile_to_map(final, map_path, KEY_CHOICES[c.mementomap], c.archive_uri)
        _checkpoint("placed")
        versions = (state.versions + [stamp])[-c.keep:]
        current_entry = {"stamp": stamp, "profile": os.path.basename(final), "urirs": set_names[0],
                         "digests": set_names[1], "mode": built["mode"], "exact": built["exact"],
                         "approximate_nights": built["approximate_nights"],
                         "map": os.path.basename(map_path) if map_path else None}
        state.commit({"identity": identity, "inputs": current, "current": current_entry,
                      "versions": versions, "nights": (state.data or {}).get("nights", 0) + 1,
                      "committed": _iso(_now())})
        _checkpoint("committed")
        publish.point_latest(c.output_dir, c.name, final)
        if map_path:
            publish.point_latest(c.output_dir, c.name, map_path, ".ukvs")
        elif publish.latest_target(c.output_dir, c.name, ".ukvs"):     # maps were turned off
            os.unlink(publish.latest_path(c.output_dir, c.name, ".ukvs"))
        pruned = publish.prune(c.output_dir, c.name, set(versions))
        self.ledger.prune(set_names)
        self.record.update(status="published", mode=built["mode"], reason=built["reason"], version=stamp,
                           profile=final, exact=built["exact"], night_captures=built["night_captures"],
                           pruned=len(pruned))
        if "bounded_keys" in built:
            self.record["bounded_keys"] = built["bounded_keys"]


def summary_line(record):
    """One line for cron mail."""
    secs = "%.1f s" % record.get("seconds", 0)
    status = record.get("status")
    if status == "published":
        exact = "exact" if len(record.get("exact") or ()) == len(fold_mod.FEATURES) else \
            "approximate: %d key(s) with bounds" % record.get("bounded_keys", 0)
        return "published %s (%s: %s; %s captures new, %s in all, %s lines; %s) in %s" % (
            os.path.basename(record["profile"]), record["mode"], record.get("reason"),
            "{:,}".format(record.get("night_captures", 0)), "{:,}".format(record.get("captures", 0)),
            "{:,}".format(record.get("lines", 0)), exact, secs)
    if status == "unchanged":
        return "nothing new in %d input(s); %s stays published (%s)" % (
            record.get("inputs", 0), os.path.basename(record.get("profile") or "?"), secs)
    if status == "locked":
        return "not run: %s" % record.get("error")
    return "FAILED after %s: %s (the published profile and the state are unchanged)" % (
        secs, record.get("error"))
