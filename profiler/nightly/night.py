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

The output, state and sets folders are opened once and every file in them is reached without
following links (profiler.nightly.folder); a night removes or replaces only what a ledger
proves it wrote (profiler.nightly.ownership). A published profile that is no longer the file
the ledger recorded (cut short, edited, someone's copy) is validated, never folded into, and
rebuilt from the inputs.
"""

import contextlib
import datetime
import logging
import os
import stat
import time

from profiler import jsonnum
from profiler.errors import RunError, UserError, printable
from profiler.files.validate import validate
from profiler.formats import inputs as inputs_mod
from profiler.io import signalmask
from profiler.model.policy import load as load_policy
from profiler.nightly import changes, fold as fold_mod, ownership, publish, sets
from profiler.nightly.folder import FILE_MODE, Folder, kind
from profiler.nightly.lock import LockHeld, RunLock, describe
from profiler.nightly.state import STATE_FILE, State, compare_inputs, fingerprint

log = logging.getLogger("archive-profiler")
RUN_LOG = "runs.jsonl"


class ValidationFailed(RunError):
    """The new profile did not validate: nothing was published."""


#: seconds a modification time may pass the clock (a coarse or network filesystem's times) before
#: it is taken for one in the future, which cannot tell when its file was last written
FUTURE_SLACK = 60


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
        self.progress = progress    # a progress bar on stderr while profiling (profiler.run.progress)
        self.state = None           # made by run(): the state folder's state.json
        self.work = None            # made by run(): the night's work folder (a Folder)
        self.out = self.state_folder = self.sets_folder = None
        self.outputs = self.sets_ledger = None     # made by run(): the ledgers of the output and sets folders
        self.staging = {}           # folder path: the Folder files for it are finished in
        self.report_note = None     # why the change report compares with nothing
        self.adopted = False        # the ledgers were made from a state without them, this night
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
            try:
                self._check_before_folders()
                self._open_folders()
                with RunLock(self.state_folder) as lock:
                    if lock.stale:
                        log.warning("took over a stale lock left by a run that died (%s)", describe(lock.stale))
                        self.record["stale_lock"] = lock.stale
                    self._check_state_files()
                    self.work, removed = self.works.make()
                    try:
                        self._locked(started, removed)
                    finally:
                        for folder, ledger in ((self.out, self.outputs), (self.sets_folder, self.sets_ledger)):
                            if folder.path in self.staging:
                                publish.remove_staging(folder, ledger, self.staging.pop(folder.path), self.work)
                        self.works.remove(self.work)
            except BaseException as e:
                self.record.setdefault("status", "locked" if isinstance(e, LockHeld) else "failed")
                self.record["error"] = _error_line(e)
                raise
            finally:
                kept = {}
                for ledger in (self.outputs, self.sets_ledger):
                    kept.update(ledger.kept if ledger is not None else {})
                if kept:
                    self.record["not_removed"] = [{"path": p, "reason": kept[p]} for p in sorted(kept)[:LISTED]]
                self.record["seconds"] = round((_now() - started).total_seconds(), 2)
                self._log_run()
        finally:
            for folder in (self.sets_folder, self.state_folder, self.out):
                if folder is not None:
                    folder.close()
        return self.record

    def _check_before_folders(self):
        """A UserError, before the output and state folders are made, for an input path (not a
        pattern) that is not there or a policy not found: the example config run unedited made
        /data/archive/profiles, then failed on /data/archive/cdx/. Only when a folder would be
        made: a night with its folders there fails later, in its run log."""
        c = self.config
        if os.path.lexists(c.output_dir) and os.path.lexists(c.state_dir):
            return
        for path in c.inputs:
            if "://" not in path and not any(ch in path for ch in "*?[") and not os.path.lexists(path):
                raise inputs_mod.InputError("input not found: %s" % path)
        load_policy(c.policy)

    def _open_folders(self):
        """The output, state and sets folders: real folders of this user (or trust_folders)."""
        c = self.config
        self.out = Folder.open(c.output_dir, c.trust_folders, make=True)
        self.state_folder = Folder.open(c.state_dir, c.trust_folders, make=True)
        for folder in (self.out, self.state_folder):
            folder.refuse_read_only()
        self.sets_folder = self.state_folder.sub("sets")
        self.outputs = ownership.Ledger(self.state_folder, ownership.OUTPUTS_LEDGER, self.out)
        self.sets_ledger = ownership.Ledger(self.state_folder, ownership.SETS_LEDGER, self.sets_folder)
        self.works = ownership.WorkFolders(self.state_folder)

    def _check_state_files(self):
        """UnsafeFile when a state file's name holds a link, a FIFO, a folder or another user's file
        (checked before the night's work, not when it is written at the end)."""
        for name in (STATE_FILE, ownership.OUTPUTS_LEDGER, ownership.SETS_LEDGER, ownership.WORK_LEDGER):
            self.state_folder.checked(name)
        st = self.state_folder.lstat(RUN_LOG)
        if st is not None:
            self.state_folder.check(RUN_LOG, st, in_place=True)

    def _log_run(self):
        if self.state_folder is None or self.state_folder.fd is None:
            return
        try:
            self.state_folder.append(RUN_LOG, record_json(self.record) + b"\n")
        except (OSError, UserError) as e:
            log.warning("could not append to the run log: %s", e)

    def _locked(self, started, removed_work):
        """The night, once the lock is held and the work folder made."""
        c = self.config
        self.outputs.scratch = self.sets_ledger.scratch = self.work
        self.state = State(self.state_folder).load()
        # another config's state
        ownership.check_state_owner(self.state.owner, c.name, c.output_dir, c.state_dir, c.source)
        self.adopted = self._adopt()
        ownership.claim_output(self.out, c.name, c.state_dir, create=False)     # another config's output
        for suffix in (".cdxj",) + ((".ukvs",) if c.mementomap else ()):     # refused before anything is made
            publish.check_latest(self.out, self.outputs, c.name, suffix)
        ownership.claim_output(self.out, c.name, c.state_dir)
        self._recover(removed_work)
        self._night(started)

    def _staging(self, folder, ledger):
        """A folder on folder's filesystem to finish its files in (made once a night)."""
        if folder.path not in self.staging:
            self.staging[folder.path] = publish.staging_for(folder, ledger, self.work)
        return self.staging[folder.path]

    def _adopt(self):
        """A state written before the ledgers existed: its versions, NAME-latest links and sets
        (regular files and links there now) are recorded as this config's. Returns True when it
        did (the published profile is then validated before it is folded into)."""
        c, current = self.config, self.state.current
        if not current or self.outputs.exists():
            return False
        def regular(folder, name):
            st = folder.lstat(name)
            if st is not None and stat.S_ISREG(st.st_mode) and (c.trust_folders or st.st_uid == os.geteuid()):
                return st
            return None
        found = {}
        for name in {publish.version_name(c.name, v, s) for v in self.state.versions for s in publish.SUFFIXES}:
            st = regular(self.out, name)
            if st is not None:
                found[name] = st
        for suffix in (".cdxj", ".ukvs"):
            st = self.out.lstat(publish.latest_name(c.name, suffix))
            if st is not None and stat.S_ISLNK(st.st_mode) and publish.latest_target(self.out, c.name, suffix) in found:
                found[publish.latest_name(c.name, suffix)] = st
        self.outputs.record(found)
        if not self.sets_ledger.exists():
            self.sets_ledger.record({n: st for n in (current["urirs"], current["digests"])
                                     for st in [regular(self.sets_folder, n)] if st is not None})
        log.warning("recorded %d file(s) of earlier versions as this config's (a state without ledgers)", len(found))
        return True

    def _recover(self, removed_work):
        """Remove what a killed run left (only what the ledgers prove it wrote) and point NAME-latest
        at the committed version again."""
        c, current = self.config, self.state.current
        removed = list(removed_work)
        for ledger in (self.outputs, self.sets_ledger):
            removed += ledger.remove(publish.leftover_staging(ledger))
        if current:
            for suffix, target in ((".cdxj", current["profile"]), (".ukvs", current.get("map"))):
                if target and publish.latest_target(self.out, c.name, suffix) != target:
                    publish.point_latest(self.out, self.outputs, self._staging(self.out, self.outputs), c.name,
                                         target, suffix)
                    log.warning("recovered: %s-latest%s points at %s again", c.name, suffix, target)
                    self.record["recovered_link"] = True
            removed += publish.prune(self.outputs, c.name, set(self.state.versions))
            keep = (current["urirs"], current["digests"])
            removed += self.sets_ledger.remove([n for n in self.sets_ledger.names() if n not in keep])
        if removed:
            log.warning("recovered: removed %d file(s) a killed run left", len(removed))
            self.record["recovered_files"] = len(removed)

    # ------------------------------------------------------------ planning

    def _inputs(self, started):
        """{path: fingerprint} of this night's settled local inputs, and the files still settling.
        A listed file that cannot be stat'ed (a link to nothing, or gone since it was listed) is
        kept out, in ``self.unreadable`` with its reason (``_check_readable``)."""
        c = self.config
        files, own = ownership.not_own_files(inputs_mod.resolve(c.inputs), c.output_dir, c.name, c.state_dir)
        if own:
            log.warning("%d input file(s) are this config's own outputs or state, not read (first: %s)",
                        len(own), own[0])
        remote = [f for f in files if "://" in f]
        if remote:
            raise UserError("nightly takes local inputs only (it fingerprints them): %s" % remote[0])
        current, settling, future = {}, [], []
        limit = started.timestamp() - c.settle_seconds
        self.unreadable = {}
        for path in files:
            try:
                fp = fingerprint(path, c.detect_changes == "checksum")
            except OSError as e:
                self.unreadable[path] = e.strerror or str(e)
                continue
            if fp["mtime_ns"] / 1e9 > time.time() + FUTURE_SLACK:
                future.append(path)             # its time says nothing of a writer: taken as it is
                current[path] = fp
            elif c.settle_seconds and fp["mtime_ns"] / 1e9 > limit:
                settling.append(path)
                if path in self.state.inputs:       # being rewritten: as it was, until it settles
                    current[path] = self.state.inputs[path]
            else:
                current[path] = fp
        if future:
            log.warning("%d input(s) modified in the future (the clock moved back, or their times are wrong): "
                        "profiled as they are, not left to settle (first: %s)", len(future), future[0])
        self.record["future_inputs"] = len(future)
        return current, settling

    def _night(self, started):
        c, state = self.config, self.state
        pol = load_policy(c.policy)
        if c.mementomap and not pol.writes_plain_lines():
            raise UserError("%s: mementomap needs a policy that writes lines of all time (datetime any); "
                            "policy %s writes its lines by %s only"
                            % (c.source, pol.name, " or ".join(pol.datetime_levels())))
        self.policy = pol
        identity = c.identity(pol.to_dict())
        current, settling = self._inputs(started)
        if settling:
            log.info("%d input(s) modified in the last %d s are left for the next run", len(settling),
                     c.settle_seconds)
        new, changed, removed = compare_inputs(state.inputs, current)
        removed = [p for p in removed if p not in self.unreadable]     # there, but not read: _check_readable
        self.record.update(inputs=len(current), new_inputs=len(new), changed_inputs=len(changed),
                           removed_inputs=len(removed), settling_inputs=len(settling))
        prev = state.current
        old_profile = self.out.join(prev["profile"]) if prev else None
        reasons = []
        if not prev:
            reasons.append("first run")
        else:
            if state.data.get("identity") != identity:
                reasons.append("policy, revisit handling, language detection or archive URI changed")
            if changed:
                reasons.append("%d input(s) changed" % len(changed))
            if removed:
                reasons.append("%d input(s) removed%s" % (len(removed), _first(removed)))
                self.record["removed"] = removed[:LISTED]
            bounded = len(prev.get("exact", ())) < len(fold_mod.FEATURES)
            if bounded and c.on_overlap == "rebuild":      # the config asks for exact numbers now
                reasons.append("the profile carries bounds and on_overlap is rebuild (exact numbers)")
            elif bounded and prev.get("approximate_nights", 0) >= c.max_approximate_nights:
                reasons.append("the profile has carried bounds for %d night(s) (max_approximate_nights)"
                               % prev["approximate_nights"])
            if publish.version_stamp(c.name, prev["profile"]) is None:     # renamed: no NAME-latest yet
                reasons.append("the name changed to %s (the published profile is %s)" % (c.name, prev["profile"]))
            damage = self._published_damage(prev["profile"])
            if damage:
                reasons.append(damage)
                self.record["damaged_profile"] = prev["profile"]
                self.report_note = "the previous profile " + damage[len("the published profile "):]
            elif not all(self.sets_ledger.owns(n) for n in (prev["urirs"], prev["digests"])):
                reasons.append("the URI-R and digest sets of earlier nights are missing or changed")
        if not reasons and not new:
            self.record.update(status="unchanged", mode="none", version=prev["stamp"],
                               profile=old_profile, exact=prev.get("exact"))
            log.info("nothing new since %s", prev["stamp"])
            return
        if not current:
            if settling:
                self.record.update(status="waiting", mode="none", settle_seconds=c.settle_seconds)
                log.info("nothing settled yet: %d input(s) wait for the next run", len(settling))
                return
            raise UserError("no input files")
        self._check_readable(current)
        out = os.path.join(self.work.path, "profile.cdxj")
        if reasons:
            built = self._rebuild(current, out, reasons)
        else:
            built = self._delta(new, current, old_profile, out)
        self._check(out, built)
        self._publish(out, built, old_profile, current, identity)

    def _check_readable(self, current):
        """An InputError naming the first input this night would read that cannot be read (a link to
        nothing, permission denied, a FIFO or device in a file's place), before anything is built:
        the profile would lose its captures, with nobody to read the warning (``profile`` skips it
        and says so). ``runs.jsonl`` lists them (``unreadable_inputs``). An input deleted from a
        listed folder is no such input: the night rebuilds without it (the summary names it)."""
        found = dict(self.unreadable)
        for path in current:
            why = _unreadable(path)
            if why:
                found[path] = why
        if found:
            paths = sorted(found)
            self.record["unreadable_inputs"] = [{"path": p, "reason": found[p]} for p in paths[:LISTED]]
            more = " (and %d more: runs.jsonl lists them)" % (len(paths) - 1) if len(paths) > 1 else ""
            raise inputs_mod.InputError("input cannot be read: %s (%s)%s; nothing is built without it"
                                        % (paths[0], found[paths[0]], more))

    def _published_damage(self, name):
        """Why the published profile (name) cannot be folded into, or None: missing, not a regular
        file, damaged (validate), or changed since it was published (not the file the ledger
        recorded). A changed file is read only when it is a regular file."""
        st = self.out.lstat(name)
        if st is None:
            return "the published profile %s is missing" % name
        if self.outputs.owns(name, st) and not self.adopted:
            return None
        if not stat.S_ISREG(st.st_mode):
            return "the published profile %s is %s, not the file published" % (name, kind(st.st_mode))
        if st.st_size == 0:
            return "the published profile %s is damaged (empty)" % name
        with self._phase("validate"):
            report = validate(self.out.join(name))
        if not report.ok:
            first = report.problems[0]
            return "the published profile %s is damaged (%d problem(s), first: line %s: %s)" % (
                name, report.count, first.lineno, (str(first.message).splitlines() or ["?"])[0])
        if not self.outputs.owns(name, st):
            return "the published profile %s changed since it was published" % name
        return None

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
                               progress=self.progress, detect_language=c.detect_language,
                               collections=c.collections(), refuse_indexed=True)

    def _collections(self):
        """The collection options of the night's scans: the config's, when the policy has collection."""
        from profiler.model import criteria
        return self.config.collections() if criteria.COLLECTION.name in self.policy.names else None

    def _depths(self):
        """Whether the night's scans read WARC metadata records' hop paths (a policy with depth)."""
        from profiler.model import criteria
        return criteria.DEPTH.name in self.policy.names

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
                scan = sets.Scan(self.work.path).run(files, self.config.split_size, progress=self._progress("scanning"),
                                                detect_language=self._detecting(), collections=self._collections(),
                                                depths=self._depths())
            urirs, digests = self._write_sets(None, scan)
        else:
            scan, (urirs, digests) = night
        return {"mode": "rebuild", "reason": "; ".join(reasons), "urirs": urirs, "digests": digests,
                "exact": list(fold_mod.FEATURES), "approximate_nights": 0,
                "night_captures": scan.captures}

    def _delta(self, new, current, old_profile, out):
        c, prev = self.config, self.state.current
        captures_path = os.path.join(self.work.path, "captures.cdxj")
        with self._phase("scan"):
            scan = sets.Scan(self.work.path, captures_path, pairs=True).run(
                new, c.split_size, progress=self._progress("scanning"), detect_language=self._detecting(),
                collections=self._collections(), depths=self._depths())
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
            delta = os.path.join(self.work.path, "delta.cdxj")
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
        subset = os.path.join(self.work.path, "subset-%s.cdxj" % what)
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
            tmp = os.path.join(self.work.path, what + ".gz")
            old = self.sets_folder.join(prev[what]) if prev else None
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
        sets_names = self.sets_folder.names()
        taken = set(state.versions) | publish.stamps_used(self.out.names(), c.name + "-") | \
            publish.stamps_used(sets_names, "urirs-") | publish.stamps_used(sets_names, "digests-")
        stamp = publish.stamp(taken=taken)
        out_staging = self._staging(self.out, self.outputs)

        def place(path_or_data, suffix):
            """Publish a finished file of the work folder (or bytes) as this version's suffix."""
            if isinstance(path_or_data, bytes):
                staged = "version" + suffix
                out_staging.create(staged, path_or_data, c.file_mode)
            else:
                staged = publish.stage(path_or_data, out_staging, self.work)
            return publish.place(out_staging, staged, self.out, self.outputs,
                                 publish.version_name(c.name, stamp, suffix), c.file_mode)

        final = place(out, ".cdxj")
        set_names = []
        sets_staging = self._staging(self.sets_folder, self.sets_ledger)
        for what, tmp in zip(("urirs", "digests"), (built["urirs"], built["digests"])):
            name = "%s-%s.gz" % (what, stamp)
            publish.place(sets_staging, publish.stage(tmp, sets_staging, self.work), self.sets_folder,
                          self.sets_ledger, name, FILE_MODE)
            set_names.append(name)
        if c.report:
            svg_name = publish.version_name(c.name, stamp, ".changes.svg")
            base, note = (None, self.report_note) if self.report_note else (old_profile, None)
            with self._phase("report"):
                try:
                    report, documents = changes.documents(base, final, svg_name, note=note)
                except UserError as e:
                    log.warning("the change report compares with nothing: %s", e)
                    report, documents = changes.documents(None, final, svg_name,
                                                          note="the previous profile cannot be read (%s)" % e)
            for suffix in (".changes.json", ".changes.svg", ".changes.md"):
                place(documents[suffix], suffix)
            self.record["changes"] = {"new_hosts": report["new_hosts"]["count"],
                                      "vanished_keys": report["keys"]["vanished"],
                                      "appeared_keys": report["keys"]["appeared"]}
        map_name = None
        if c.mementomap:
            from profiler.files.ukvs import KEY_CHOICES, profile_to_map
            map_work = os.path.join(self.work.path, "map.ukvs")
            with self._phase("mementomap"):
                profile_to_map(final, map_work, KEY_CHOICES[c.mementomap], c.archive_uri)
            map_name = os.path.basename(place(map_work, ".ukvs"))
        versions = (state.versions + [stamp])[-c.keep:]
        self.out.fsync()                # the version's names are on disk before the state names them
        self.sets_folder.fsync()
        current_entry = {"stamp": stamp, "profile": os.path.basename(final), "urirs": set_names[0],
                         "digests": set_names[1], "mode": built["mode"], "exact": built["exact"],
                         "approximate_nights": built["approximate_nights"], "map": map_name}
        # a SIGTERM, SIGINT or SIGHUP from the commit on waits until the latest links name the
        # version the state names (it ended the run between them: links to the old version)
        with signalmask.held():
            state.commit({"identity": identity, "inputs": current, "current": current_entry,
                          "owner": ownership.state_owner(c.name, c.output_dir, c.source),
                          "versions": versions, "nights": (state.data or {}).get("nights", 0) + 1,
                          "committed": _iso(_now())}, self.work)
            self.record["committed"] = os.path.basename(final)     # a failure from here on says so
            publish.point_latest(self.out, self.outputs, out_staging, c.name, os.path.basename(final))
            if map_name:
                publish.point_latest(self.out, self.outputs, out_staging, c.name, map_name, ".ukvs")
            else:                                                   # maps were turned off
                publish.remove_latest(self.out, self.outputs, c.name, ".ukvs")
        pruned = publish.prune(self.outputs, c.name, set(versions))
        self.sets_ledger.remove([n for n in self.sets_ledger.names() if n not in set_names])
        self.record.update(status="published", mode=built["mode"], reason=built["reason"], version=stamp,
                           profile=final, exact=built["exact"], night_captures=built["night_captures"],
                           pruned=len(pruned))
        if "bounded_keys" in built:
            self.record["bounded_keys"] = built["bounded_keys"]


#: paths of removed or unreadable inputs a run's record lists (runs.jsonl); the counts are whole
LISTED = 100


def _first(paths):
    """': PATH' for one path, ', first PATH' for more: the summary line names what was removed."""
    return (": %s" if len(paths) == 1 else ", first %s") % paths[0] if paths else ""


def _unreadable(path):
    """Why an input file cannot be read (not a regular file, or not opened), or None. Opened
    without blocking (a FIFO is never waited on) and closed at once."""
    why = inputs_mod.not_regular(path)
    if why:
        return why
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC))
    except OSError as e:
        return "unreadable: %s" % (e.strerror or e)
    return None


def record_json(record):
    """A run record as JSON bytes; a path whose bytes are not UTF-8 (read as surrogate escapes,
    which JSON cannot hold) shown escaped, \\xff: the record was lost and the run failed."""
    try:
        return jsonnum.dumps(record)
    except TypeError:
        return jsonnum.dumps(_escaped(record))


def _escaped(value):
    if isinstance(value, str):
        try:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_escaped(v) for v in value]
    return value


def _error_line(e):
    """The run record's error: a mistake's or the system's message whole, on one line (the path it
    names may hold a line end: it was cut there, naming a file that is not there); another's first line."""
    text = str(e)
    if not text:
        return type(e).__name__
    return printable(text) if isinstance(e, (UserError, OSError)) else text.splitlines()[0]


def summary_line(record):
    """One line for cron mail, whatever the paths it names hold (control characters escaped)."""
    line = _summary(record)
    if record.get("future_inputs"):
        line += "; %d input(s) modified in the future (profiled as they are)" % record["future_inputs"]
    if record.get("not_removed"):
        first = record["not_removed"][0]
        line += "; %d old file(s) could not be removed, kept (first: %s: %s)" % (
            len(record["not_removed"]), first["path"], first["reason"])
    return printable(line)


def _summary(record):
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
    if status == "waiting":
        return "nothing settled yet: %d input(s) modified in the last %s s wait for the next run; nothing " \
               "published (%s)" % (record.get("settling_inputs", 0), record.get("settle_seconds", "?"), secs)
    if record.get("committed"):                 # the state names the new version: the next run links it
        return "FAILED after %s: %s (%s was committed; the next run points the latest link at it)" % (
            secs, record.get("error"), record["committed"])
    return "FAILED after %s: %s (the published profile and the state are unchanged)" % (
        secs, record.get("error"))
