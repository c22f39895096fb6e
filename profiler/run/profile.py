"""The `profile` command: inputs -> manifest -> mrjob job -> sorted, atomically written profile."""

import contextlib
import logging
import os
import re
import shutil

import orjson

from profiler import jsonnum
from profiler.accel import fast
from profiler.errors import RunError
from profiler.files import outfiles, output
from profiler.formats import inputs as inputs_mod, registry
from profiler.job import bigsums
from profiler.io.names import display_name
from profiler.run.progress import RunProgress
from profiler.model import collection as collection_mod, criteria
from profiler.model.policy import load as load_policy
from profiler import contract, plugins
from profiler.io import signalmask
from profiler.runtime import leftovers as runner_leftovers, localjob, policycache, preflight, remote, taskenv

RUNNERS = ("inline", "local", "spark", "hadoop", "emr", "dataproc")
#: runners whose step-1 reduce tasks choose hot digests themselves: Hadoop Streaming runs a step's
#: map and reduce tasks as one job, with nothing between them to choose them for the whole job
STREAMING_RUNNERS = ("hadoop", "emr", "dataproc")
log = logging.getLogger("archive-profiler")


class JobFailed(RunError):
    """The MapReduce job failed (one-line message); the previous output is intact."""


def write_manifest(splits, folder):
    """One manifest file per split, so that every runner starts at least one map task per split.
    Each split gets its share of the run's byte budget (profiler.job.bigsums)."""
    from profiler.job.bigsums import MAX_TOTAL
    os.makedirs(folder, exist_ok=True)
    paths = []
    share = MAX_TOTAL // max(1, len(splits))
    for i, split in enumerate(splits):
        path = os.path.join(folder, "split-%05d.json" % i)
        with open(path, "wb") as f:
            f.write(orjson.dumps(dict(encoded_path(split), max_bytes=share)) + b"\n")
        paths.append(path)
    return paths


def encoded_path(split):
    """The split with a path that is not UTF-8 (a file name's raw bytes) as hex in 'path_hex'
    (JSON holds only UTF-8); profiler.job.mapside decodes it."""
    try:
        split["path"].encode("utf-8")
        return split
    except UnicodeEncodeError:
        return dict(split, path=display_name(split["path"]),
                    path_hex=os.fsencode(split["path"]).hex())


#: memory of the local runner's `sort` (its -S); the rest of each task is bounded by table limits
LOCAL_SORT_BUFFER = "256M"


def _local_tmp_dir(runner, conf_paths, extra_args, work, environ=os.environ):
    """mrjob's local temp folder (the job's step files) inside the run's work folder, which a run
    killed with SIGKILL leaves where the next run removes it (outfiles.work_folder): by default
    it is a folder of $TMPDIR no one could prove was left by a dead run. Only when no mrjob
    config or argument chooses one."""
    if runner not in ("inline", "local") or any(a.startswith("--local-tmp-dir") for a in extra_args):
        return []
    if conf_paths or environ.get("MRJOB_CONF") or \
            any(os.path.exists(os.path.expanduser(p)) for p in localjob.MRJOB_CONFS):
        return []
    return ["--local-tmp-dir", work]


def job_args(manifests, policy, runner="inline", conf_paths=(), resolve_revisits=True,
             py_files=(), cores=None, extra=(), files=()):
    """The mrjob command line of the profile job."""
    args = list(manifests) + ["-r", runner] + contract.option_args(
        policy_json=orjson.dumps(policy.to_dict()).decode(), resolve_revisits=resolve_revisits,
        hot_digests="local" if runner in STREAMING_RUNNERS else "none")
    for path in conf_paths:
        args += ["-c", path]
    for path in py_files:
        args += ["--py-files", path]
    for path in files:
        args += ["--files", path]
    if cores:
        args += ["--num-cores", str(cores)]
    # a failed or interrupted run removes its local temp folder too (mrjob keeps it by default)
    args += ["--cleanup-on-failure", "LOCAL_TMP"]
    if runner == "local":
        # mrjob's shuffle sort, with a bounded buffer: GNU sort's default grows with the input.
        # Whole lines, not mrjob's stable sort on the key field: the lines of a key still follow
        # each other (they share the prefix key<TAB>, which no other key's line has), every
        # reducer here is indifferent to the order of a key's values, and it is faster.
        # A later --sort-bin in extra wins.
        args += ["--sort-bin", "sort -S %s" % LOCAL_SORT_BUFFER]
        for name, value in taskenv.local_task_env(extra).items():
            args += ["--cmdenv", "%s=%s" % (name, value)]
    return args + list(extra)


def run_profile(input_args, out_path, policy="default", runner="inline", conf_paths=(),
                archive_uri=None, resolve_revisits=True, split_size=inputs_mod.DEFAULT_SPLIT_SIZE,
                cores=None, manifests=(), extra_args=(), created=None, ship_package=True,
                warc_reader="warcio", progress=False, detect_language=False, input_names=None, collections=None,
                refuse_indexed=False):
    """Profile the inputs into out_path. Returns a dict: what was run, and its "summary" (the
    figures of what was written: lines, bytes, the run's !meta, the '*' line's values; see
    _run_job). detect_language: HTML in WARC/ARC inputs that declares no language gets the
    detected one (the detect extra). input_names: {path: the name !meta gives it} ('-' for
    the copy of standard input). collections: where the collection field comes from, {'pattern':
    regex, 'label': the run's label, 'input_labels': [(label, path)]} (profiler.model.collection).
    refuse_indexed: an index given with a WARC or ARC file it indexes is an InputError, not a
    warning (nightly: with nobody to read the warning, the doubled counts would be published).

    For the local runner the server its tasks are forked from starts first, while the inputs are
    read (profiler.runtime.forkserver.prestart), so the first task starts sooner; a
    runner that does not take it (another Python for the tasks, say) leaves it to be closed here."""
    from profiler.job.kernels import task_preloads
    from profiler.runtime import cpulog, forkserver
    phases = cpulog.Phases()
    phases.enter("plan")
    if runner == "local" and not localjob.usable(conf_paths, extra_args):
        policy = load_policy(policy, policycache.parse) if isinstance(policy, str) else policy
        forkserver.prestart(task_preloads(policy))
    try:
        return _run_profile(input_args, out_path, policy, runner, conf_paths, archive_uri, resolve_revisits,
                            split_size, cores, manifests, extra_args, created, ship_package, warc_reader,
                            progress, detect_language, input_names, collections, phases, refuse_indexed)
    finally:
        forkserver.close_prestarted()
        phases.close()
        cpulog.write_children("client:children")


def _run_profile(input_args, out_path, policy, runner, conf_paths, archive_uri, resolve_revisits, split_size,
                 cores, manifests, extra_args, created, ship_package, warc_reader, progress=False,
                 detect_language=False, input_names=None, collections=None, phases=None, refuse_indexed=False):
    if runner not in RUNNERS:
        raise inputs_mod.InputError("unknown runner %r (choose from %s)" % (runner, ", ".join(RUNNERS)))
    out_remote = remote.is_remote(out_path)     # written locally, then put through the runner's fs
    # a local run that asks nothing of mrjob runs without it (profiler.runtime.localjob)
    direct = runner == "local" and not out_remote and localjob.usable(conf_paths, extra_args)
    ProfileJob = None
    if not direct:
        _enter(phases, "imports")
        from profiler.runtime.profile_job import ProfileJob
        _enter(phases, "plan")
        preflight.check_libraries(runner)
        preflight.check_conf_paths(runner, conf_paths)
    if cores is not None:
        preflight.check_cores(cores)
    if not out_remote:
        _check_output(out_path)
    if detect_language:
        registry.require_detection()
    pol = load_policy(policy, policycache.parse) if isinstance(policy, str) else policy
    detect_language = detect_language and uses_language(pol, "--detect-language")
    if not direct:
        job = preflight.check_job_args(ProfileJob, job_args([], pol, runner, conf_paths, extra=extra_args))
        if runner == "spark":
            preflight.check_spark(job)
        elif runner == "hadoop":
            preflight.check_hadoop(job)
    files, duplicates = inputs_mod.resolve_unique(input_args, manifests)
    for item in duplicates:
        log.warning("skipping %s: the same file as %s", display_name(item["path"]),
                    display_name(item["same_as"]))
    if direct and any(map(remote.is_remote, files)):
        direct = False      # mrjob's local runner says why it cannot list them
        from profiler.runtime.profile_job import ProfileJob
    fs = _runner_fs(runner, pol, conf_paths, extra_args) if out_remote or any(map(remote.is_remote, files)) else None
    files = [u for f in files for u in (remote.resolve(fs, f) if remote.is_remote(f) else [f])]
    if not out_remote:
        outfiles.refuse_inputs(out_path, files + list(manifests))
    infos = [remote.sniff(fs, f) if remote.is_remote(f) else inputs_mod.sniff(f) for f in files]
    skipped_files = [{"path": i["path"], "reason": i["reason"]} for i in infos if not i["format"]]
    if len(infos) == 1 and skipped_files:       # the one input refused: its reason, in one line
        raise inputs_mod.InputError("cannot profile %s: %s" % (
            display_name((input_names or {}).get(infos[0]["path"], infos[0]["path"])), skipped_files[0]["reason"]))
    for item in skipped_files:
        log.warning("skipping %s: %s", display_name((input_names or {}).get(item["path"], item["path"])),
                    item["reason"])
    twice = inputs_mod.indexed_archives(infos)
    if twice and refuse_indexed:
        raise inputs_mod.InputError(
            "%s indexes %s, which is an input too%s: their captures would be counted twice (list the indexes "
            "or the WARC/ARC files in inputs, not both)" % (display_name(twice[0][0]), display_name(twice[0][1]),
                                                           " (and %d more such index(es))" % (len(twice) - 1)
                                                           if len(twice) > 1 else ""))
    if twice:
        log.warning("%s indexes %s, which is an input too%s: their captures are counted twice (give the indexes "
                    "or the WARC/ARC files, not both)", display_name(twice[0][0]), display_name(twice[0][1]),
                    " (and %d more such index(es))" % (len(twice) - 1) if len(twice) > 1 else "")
    for info in infos:
        if not remote.is_remote(info["path"]) and inputs_mod.last_line_unended(info):
            log.warning("%s: its last line has no line end, and is read as it is (if the file was cut short, "
                        "that line's capture may be too)",
                        display_name((input_names or {}).get(info["path"], info["path"])))
    workers = 1
    if runner == "local":
        workers = cores or os.cpu_count() or 1
        split_size = balanced_split_size(infos, split_size, workers)
    splits = inputs_mod.plan_splits([i for i in infos if not remote.is_remote(i["path"])], split_size, workers) \
        + remote.plan_splits([i for i in infos if remote.is_remote(i["path"])])
    if not splits:
        raise inputs_mod.InputError("none of the %d input file(s) is %s" % (len(files), registry.listing()))
    splits = registry.choose_warc_reader(splits, warc_reader)
    if detect_language:
        splits = registry.detect_languages(splits)
    elif criteria.LANG.name not in pol.names:
        splits = registry.without_languages(splits)
    read = [i for i in infos if i["format"]]
    if criteria.LANG.name in pol.names and read and all(i["format"] == "cdx" for i in read):
        log.warning("policy %s has lang levels, and CDX indexes give no language: every capture's is unk "
                    "(languages come from a CDXJ's languages or lang field, WARC/ARC responses and "
                    "--detect-language: docs/language.md)", pol.name)
    if criteria.DEPTH.name in pol.names:
        splits = registry.with_depths(splits)
    if criteria.COLLECTION.name in pol.names:
        splits = collection_mod.for_splits(splits, registry.line_formats(), **(collections or {}))
    elif collections and any(collections.values()):
        log.warning("--collection-pattern, --collection and --input-collection do nothing: policy %s has no "
                    "collection level", pol.name)
    used = sorted({s["path"] for s in splits})
    log.info("profiling %d file(s), %.1f MB, in %d split(s) with the %s runner, policy %s",
             len(used), sum(i["size"] for i in infos if i["format"]) / 1e6, len(splits), runner, pol.name)

    made = []                                           # the work folder, once made
    try:
        work = outfiles.work_folder("archive-profiler-", record=made.append)   # (killed runs' removed first)
        manifest_paths = write_manifest(splits, os.path.join(work, "manifest"))
        shipping = ship_package and runner != "inline" and not direct
        py_files = []
        if shipping:                    # (not imported otherwise: zipfile is no small part of a short run)
            from profiler.runtime.shipping import package_zip
            py_files = [package_zip(work)]
        # the compiled hot path, if built, into each task's working directory (profiler.accel.fast)
        files = fast.shipped_files() if shipping else []
        signals = os.path.join(work, "signals")
        os.makedirs(signals)
        for pure in (bool(os.environ.get(fast.PURE_ENV)), True):
            try:
                n_lines, size, parts, counters, summary = (_run_local_job if direct else _run_job)(
                    ProfileJob, pol, runner, conf_paths, resolve_revisits, cores, extra_args, splits, infos,
                    manifest_paths, py_files, files, work, signals, pure, progress, out_path, out_remote, used,
                    archive_uri, created, skipped_files, duplicates, detect_language, input_names, phases)
                break
            except JobFailed as e:
                if pure or not bigsums.signalled(signals, e):
                    raise
                log.warning("lengths add up past 2^63 - 1: running the job again with the Python kernels, "
                            "whose sums have no bound")
        if size is not None:
            log.debug("wrote %s: %d lines, %d bytes", out_path, n_lines, size)
        return {"output": out_path, "lines": n_lines, "parts": parts, "splits": len(splits),
                "counters": counters, "skipped_files": skipped_files, "summary": summary}
    finally:
        _enter(phases, "cleanup")
        for work in made:
            _removed(work)


def _enter(phases, name):
    """The client's CPU from here on logged under name (profiler.runtime.cpulog)."""
    if phases is not None:
        phases.enter(name)


def _run_job(ProfileJob, pol, runner, conf_paths, resolve_revisits, cores, extra_args, splits, infos,
             manifest_paths, py_files, files, work, signals, pure, progress, out_path, out_remote, used,
             archive_uri, created, skipped_files, duplicates, detect_language=False, input_names=None,
             phases=None):
    """One run of the job and the writing of its profile: (lines, size, parts, counters, summary).
    pure: the pure-Python kernels in every task (profiler.job.bigsums). summary: what was
    written, counted as it was (lines, bytes, the run's !meta, the '*' line's values)."""
    _enter(phases, "job")
    task_env, bar = _task_env(signals, pure, splits, infos, work, runner, progress)
    cmdenv = [a for name, value in task_env.items() for a in ("--cmdenv", "%s=%s" % (name, value))]
    args = job_args(manifest_paths, pol, runner, conf_paths, resolve_revisits, py_files, cores,
                    cmdenv + _local_tmp_dir(runner, conf_paths, extra_args, work) + list(extra_args), files)
    job = ProfileJob(args)
    with _cleaned_up(preflight.make_runner(job)) as mr, runner_leftovers.removed_at_exit(mr), bar, \
            bar.logging_through(), _environment(task_env if runner == "inline" else {}):
        try:
            with _failure_logs_held(signals, pure):
                mr.run()
        except Exception as e:
            user_error = preflight.missing_binary(runner, e)
            if user_error:
                raise user_error
            raise JobFailed("the %s job failed: %s" % (runner, failure_line(e))) from e
        out_uri = mr.get_output_dir()
        parts = sorted(p for p in mr.fs.ls(out_uri) if os.path.basename(p).startswith("part-"))
        from mrjob.util import to_lines

        readers = [lambda p=p: to_lines(mr.fs.cat(p)) for p in parts]
        local_parts = parts if all(os.path.isfile(p) for p in parts) else None
        _require_unshrunk(infos)
        bar.writing()
        _enter(phases, "write")
        n_lines, size, summary = _write_profile(readers, local_parts, pol, work, out_path, out_remote, used,
                                                archive_uri, created, skipped_files, duplicates, resolve_revisits,
                                                detect_language, input_names)
        if out_remote:
            remote.publish(mr.fs, os.path.join(work, "profile.cdxj"), out_path)
        counters = mr.counters()
        _enter(phases, "cleanup")
    return n_lines, size, len(parts), counters, summary


def _task_env(signals, pure, splits, infos, work, runner, progress):
    """The variables every task of a run gets, and the run's progress bar."""
    task_env = {bigsums.ENV: signals}
    if pure:
        task_env[fast.PURE_ENV] = "1"
    if plugins.names():                 # the client's plugins, in every task (profiler.plugins)
        task_env[contract.PLUGINS_ENV] = ",".join(plugins.names())
    bar = RunProgress(splits, {i["path"]: i["size"] for i in infos if i["format"]},
                      os.path.join(work, "progress"), runner, enabled=progress)
    task_env.update(bar.env())
    return task_env, bar


def _run_local_job(ProfileJob, pol, runner, conf_paths, resolve_revisits, cores, extra_args, splits, infos,
                   manifest_paths, py_files, files, work, signals, pure, progress, out_path, out_remote, used,
                   archive_uri, created, skipped_files, duplicates, detect_language=False, input_names=None,
                   phases=None):
    """_run_job for a local run without mrjob (profiler.runtime.localjob): the same profile,
    counters and summary. Its tasks are forked from this process: they have its criteria and
    formats (plugins included) and choose their kernels as a task through mrjob does."""
    _enter(phases, "job")
    task_env, bar = _task_env(signals, pure, splits, infos, work, runner, progress)
    folder = os.path.join(work, "job-pure" if pure else "job")
    with bar, bar.logging_through(), _environment({}):
        try:
            parts, counters = localjob.LocalJob(manifest_paths, pol, folder, cores, resolve_revisits,
                                                env=task_env, on_step=bar.step if bar.enabled else None).run()
        except localjob.TaskFailed as e:
            raise JobFailed("the local job failed: %s" % e) from e
        readers = [lambda p=p: _file_lines(p) for p in parts]
        _require_unshrunk(infos)
        bar.writing()
        _enter(phases, "write")
        n_lines, size, summary = _write_profile(readers, parts, pol, work, out_path, out_remote, used, archive_uri,
                                                created, skipped_files, duplicates, resolve_revisits,
                                                detect_language, input_names)
        _enter(phases, "cleanup")
    _removed(folder)
    return n_lines, size, len(parts), counters, summary


def _require_unshrunk(infos):
    """JobFailed when an input was cut short while the job read it (inputs.shrunk): no profile of
    it is written."""
    problem = inputs_mod.shrunk(infos)
    if problem:
        raise JobFailed(problem)


def _file_lines(path):
    with open(path, "rb") as f:
        yield from f


def _write_profile(readers, local_parts, pol, work, out_path, out_remote, used, archive_uri, created,
                   skipped_files, duplicates, resolve_revisits, detect_language, input_names):
    """The profile of the job's output parts written (to work/profile.cdxj when out_path is
    remote): (lines, bytes, summary). summary: what was written, counted as it was (lines,
    bytes, the run's !meta, the '*' line's values)."""
    detection = None
    if detect_language:
        from profiler.model.detect import meta as detection_meta
        detection = detection_meta()

    written = []

    def headers(meta):
        lines = output.header_lines(archive_uri, pol.to_dict(), shown(used), meta, shown_items(skipped_files),
                                    resolve_revisits, created, shown_items(duplicates), detection)
        written[:] = lines
        return lines

    def shown(paths):
        return sorted(input_names.get(p, p) for p in paths) if input_names else paths

    def shown_items(items):
        return [dict(i, path=input_names.get(i["path"], i["path"])) for i in items] if input_names else items
    local_out = os.path.join(work, "profile.cdxj") if out_remote else out_path
    tally = output.Tally(b" ".join([b"*"] + [b"-"] * (len(output.keys_of(pol.to_dict())) - 1)))
    n_lines = output.write_profile(local_out, readers, headers, local_parts, tally)
    run_meta = next((jsonnum.loads(line[6:]) for line in written if line.startswith(b'!meta {"inputs"')), {})
    summary = {"lines": tally.lines, "bytes": tally.bytes, "run": run_meta, "root": tally.root or {}}
    return n_lines, tally.bytes, summary


#: mrjob's words for a command that failed (subprocess.CalledProcessError), the whole command line
_FAILED_COMMAND = re.compile(r"Command '\[('[^']*'|\"[^\"]*\").*?\]' returned non-zero exit status (-?[0-9]+)\.?", re.S)
#: the longest failure line printed
FAILURE_LINE = 300


def failure_line(error):
    """A job's failure in one short line: a failed command by its program's name and exit
    status (mrjob's message holds the whole command line, kilobytes of it)."""
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    text = _FAILED_COMMAND.sub(lambda m: "%s exited with status %s (its log is above)"
                               % (os.path.basename(m.group(1)[1:-1]), m.group(2)), text)
    return text if len(text) <= FAILURE_LINE else text[:FAILURE_LINE - 3] + "..."


@contextlib.contextmanager
def _failure_logs_held(signals, pure):
    """mrjob's error records (a failed task's traceback) held back while a compiled run goes;
    dropped when its tasks stopped for sums past 63 bits (the run goes again), else logged."""
    if pure:
        yield
        return
    held = []

    def hold(record):
        if record.name.startswith("mrjob") and (record.levelno >= logging.ERROR
                                                 or bigsums.MARK in record.getMessage()):
            held.append(record)
            return False
        return True
    handlers = logging.getLogger("mrjob").handlers + logging.getLogger().handlers
    for handler in handlers:
        handler.addFilter(hold)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(hold)
        if not bigsums.signalled(signals):
            seen = set()
            for record in held:
                if id(record) not in seen:
                    seen.add(id(record))
                    logging.getLogger(record.name).handle(record)


def _removed(folder):
    """folder removed whole: a Ctrl-C or SIGTERM meanwhile is held until it is gone (it left the
    rest of the folder behind)."""
    with signalmask.held():
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def _cleaned_up(runner):
    """The runner, cleaned up (its temp folder removed) however the block ends, with signals held
    meanwhile: an interrupt during mrjob's cleanup left the rest of its temp folder behind."""
    try:
        yield runner
    finally:
        with signalmask.held():
            runner.cleanup()


@contextlib.contextmanager
def _environment(values):
    """os.environ with values set for the block and the other variables only a run sets for its
    tasks (contract.TASK_ENV) unset: the inline runner's tasks run in this process, and the other
    runners' tasks inherit it."""
    names = set(values) | set(contract.TASK_ENV)
    old = {name: os.environ.get(name) for name in names}
    for name in names - set(values):
        os.environ.pop(name, None)
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in old.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def uses_language(policy, option):
    """Whether the policy has the lang criterion; if not, a warning that option does nothing."""
    if criteria.LANG.name in policy.names:
        return True
    log.warning("%s does nothing: policy %s has no lang level", option, policy.name)
    return False


def balanced_split_size(infos, split_size, cores):
    """A split size near split_size that cuts the local, uncompressed, splittable inputs into a
    multiple of cores map tasks (the local runner runs cores at a time: 3 splits on 2 cores
    leave one core idle while the last runs)."""
    total = sum(i["size"] for i in infos if i["format"] and not i.get("compression")
                and registry.FORMATS[i["format"]].lines and not remote.is_remote(i["path"]))
    if cores <= 1 or total <= split_size:
        return split_size
    n = max(cores, int(round(total / split_size / cores)) * cores)
    return -(-total // n)


def _check_output(out_path):
    """Refuse, before any work, an output that must not be written (profiler.files.outfiles)."""
    real = outfiles.target(out_path)
    if not outfiles.is_stdout(real) and not os.access(os.path.dirname(os.path.abspath(real)), os.W_OK):
        raise inputs_mod.InputError("cannot write to folder: %s" % os.path.dirname(os.path.abspath(real)))


def _runner_fs(runner, pol, conf_paths, extra_args):
    """The filesystem (mrjob ``runner.fs``) of a runner with these options, for remote paths."""
    from profiler.runtime.profile_job import ProfileJob

    job = ProfileJob(job_args([], pol, runner, conf_paths, extra=extra_args))
    return preflight.make_runner(job).fs
