"""How a local master's driver JVM starts (profiler.runtime.sparklaunch), without starting Spark:
its class archive, and its java command asked of Spark's launcher once (a fake Spark whose
`java` prints what the launcher prints) and used only where the launcher would answer the same."""

import json
import os
import stat

from profiler.runtime import sparklaunch

LAUNCHER = r'''#!/bin/sh
for a in "$@"; do echo "$a" >> "%(log)s"; done
case "$*" in
*-version*) echo 'openjdk version "%(version)s" 2025-04-15' >&2; exit 0;;
esac
printf 'a line of the launcher\n\0\n'
printf '%%s\0' "$0" -cp "$SPARK_HOME/conf/:$SPARK_HOME/jars/*" -Xmx1g
for a in "$@"; do case "$a" in -D*) printf '%%s\0' "$a";; esac; done
printf '%%s\0' --add-opens=java.base/java.lang=ALL-UNNAMED org.apache.spark.deploy.SparkSubmit
exit 0
'''


def _fake_spark(tmp_path, java_version="17.0.15"):
    java_home = tmp_path / "jdk"
    (java_home / "bin").mkdir(parents=True)
    java = java_home / "bin" / "java"
    java.write_text(LAUNCHER % dict(log=tmp_path / "java.log", version=java_version))
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    spark = tmp_path / "spark"
    (spark / "bin").mkdir(parents=True)
    (spark / "jars").mkdir()
    (spark / "jars" / "spark-core.jar").write_bytes(b"jar")
    return str(spark / "bin" / "spark-submit"), {"JAVA_HOME": str(java_home), "XDG_CACHE_HOME": str(tmp_path / "cache"),
                                                 "PATH": os.environ["PATH"]}


def test_class_archive_written_once_then_mapped(tmp_path):
    spark_submit, env = _fake_spark(tmp_path)
    first = sparklaunch.ClassArchive.for_spark(spark_submit, env)
    assert first.option() == "-XX:ArchiveClassesAtExit=" + first.writing
    with open(first.writing, "wb") as f:         # what the JVM writes when it exits
        f.write(b"archive")
    first.finish(True)
    assert os.path.isfile(first.path) and first.writing is None
    later = sparklaunch.ClassArchive.for_spark(spark_submit, env)
    assert later.option() == "-XX:SharedArchiveFile=" + first.path
    failed = sparklaunch.ClassArchive(str(tmp_path / "other.jsa"))
    with open(failed.writing, "wb") as f:
        f.write(b"partial")
    failed.finish(False)                          # a run that failed: its partial archive is removed
    assert not os.path.exists(str(tmp_path / "other.jsa")) and os.listdir(str(tmp_path)).count("other.jsa") == 0


def test_no_class_archive_before_java_13_or_when_turned_off(tmp_path):
    spark_submit, env = _fake_spark(tmp_path, "11.0.2")
    assert sparklaunch.ClassArchive.for_spark(spark_submit, env) is False
    spark_submit, env = _fake_spark(tmp_path / "b")
    assert sparklaunch.ClassArchive.for_spark(spark_submit, dict(env, **{sparklaunch.CDS_ENV: "0"})) is False


def _launches(tmp_path):
    log = tmp_path / "java.log"
    return log.read_text().count("org.apache.spark.launcher.Main") if log.exists() else 0


def test_driver_command_asked_of_the_launcher_once(tmp_path):
    spark_submit, env = _fake_spark(tmp_path)
    home = os.path.realpath(str(tmp_path / "spark"))
    found = sparklaunch.DriverCommand.for_spark(spark_submit, env)
    assert _launches(tmp_path) == 1
    assert found.words[1:4] == ["-cp", home + "/conf/:" + home + "/jars/*", "-Xmx1g"]
    assert found.env["SPARK_HOME"] == home and found.env["PYTHONHASHSEED"] == "0"
    again = sparklaunch.DriverCommand.for_spark(spark_submit, env)          # from the cache
    assert _launches(tmp_path) == 1 and again.words == found.words
    [cached] = os.listdir(str(tmp_path / "cache" / "archive-profiler" / "spark-launch"))
    with open(str(tmp_path / "cache" / "archive-profiler" / "spark-launch" / cached)) as f:
        assert json.load(f)["words"] == found.words
    args = ["--driver-java-options", '-XX:+UseSerialGC "-XX:SharedArchiveFile=/a b.jsa"', "--master", "local[2]",
            "--deploy-mode", "client", "program.py", "x"]
    command = found.command(args)
    at = command.index(sparklaunch.SUBMIT_CLASS)
    assert command[at + 1:] == args                       # spark-submit's arguments, unchanged
    assert command[3:6] == ["-Xmx1g", "-XX:+UseSerialGC", "-XX:SharedArchiveFile=/a b.jsa"]
    assert sparklaunch.MARKER not in command and "--add-opens=java.base/java.lang=ALL-UNNAMED" in command
    conf = found.command(["--conf", "spark.driver.extraJavaOptions=-Xss2m", "program.py"])
    assert conf[3:5] == ["-Xmx1g", "-Xss2m"]


def test_driver_command_left_to_the_launcher_when_it_would_answer_otherwise(tmp_path):
    spark_submit, env = _fake_spark(tmp_path)
    found = sparklaunch.DriverCommand.for_spark(spark_submit, env)
    for args in (["--driver-memory", "4g"], ["--conf", "spark.driver.extraClassPath=/x.jar"],
                 ["--deploy-mode", "cluster"], ["--properties-file", "p.conf"],
                 ["--driver-java-options", "-Xss2m", "--conf", "spark.driver.extraJavaOptions=-Xss4m"],
                 ["--driver-java-options", '"unclosed']):
        assert found.command(args + ["program.py"]) is None, args
    (tmp_path / "spark" / "conf").mkdir()
    (tmp_path / "spark" / "conf" / "spark-defaults.conf").write_text("spark.driver.memory 4g\n")
    assert sparklaunch.DriverCommand.for_spark(spark_submit, env) is None      # a configuration folder
    os.unlink(str(tmp_path / "spark" / "conf" / "spark-defaults.conf"))
    assert sparklaunch.DriverCommand.for_spark(spark_submit, dict(env, **{sparklaunch.DIRECT_ENV: "0"})) is None
    assert sparklaunch.DriverCommand.for_spark(spark_submit, dict(env, SPARK_DIST_CLASSPATH="/h/*")) is not None
    assert _launches(tmp_path) == 2          # another environment the launcher reads: asked again


def test_a_launcher_that_fails_or_answers_otherwise_is_not_used(tmp_path):
    spark_submit, env = _fake_spark(tmp_path)
    java = tmp_path / "jdk" / "bin" / "java"
    java.write_text("#!/bin/sh\nprintf 'java\\0-cp\\0x\\0org.apache.spark.deploy.SparkSubmit\\0'\n")   # no marker
    assert sparklaunch.DriverCommand.for_spark(spark_submit, env) is None
    java.write_text("#!/bin/sh\nexit 1\n")
    assert sparklaunch.DriverCommand.for_spark(spark_submit, env) is None
    assert not os.listdir(str(tmp_path / "cache" / "archive-profiler" / "spark-launch"))


def _cached(tmp_path):
    folder = tmp_path / "cache" / "archive-profiler" / "spark-launch"
    return [folder / n for n in os.listdir(str(folder))] if folder.is_dir() else []


def test_a_damaged_cached_command_is_asked_again(tmp_path):
    spark_submit, env = _fake_spark(tmp_path)
    good = sparklaunch.DriverCommand.for_spark(spark_submit, env)
    [path] = _cached(tmp_path)
    for damaged in (b"", b"\xff\xfe not json", b"[1, 2]", b'{"words": "java", "env": {}}',
                    b'{"words": ["java", "-cp", "x"], "env": {}}',                       # no marker
                    json.dumps({"words": good.words, "env": {"A": 1}}).encode(),
                    json.dumps({"words": good.words + [sparklaunch.MARKER], "env": {}}).encode(),
                    b"[" * 100000 + b"]" * 100000, b" " * (sparklaunch.MAX_CACHED + 1)):
        path.write_bytes(damaged)
        found = sparklaunch.DriverCommand.for_spark(spark_submit, env)
        assert found.words == good.words and found.command(["program.py"])[-1] == "program.py"
        assert json.loads(path.read_text())["words"] == good.words        # written again, whole


def test_a_cache_name_held_by_something_else_is_left_as_it_is(tmp_path):
    spark_submit, env = _fake_spark(tmp_path)
    sparklaunch.DriverCommand.for_spark(spark_submit, env)
    [path] = _cached(tmp_path)
    target = tmp_path / "precious"
    target.write_text("mine")
    for make in (lambda: path.mkdir(), lambda: path.symlink_to(target / "missing"), lambda: os.mkfifo(str(path))):
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        elif os.path.lexists(str(path)):
            os.unlink(str(path))
        make()
        found = sparklaunch.DriverCommand.for_spark(spark_submit, env)      # asked again, used, not cached
        assert found is not None and found.command(["program.py"])
        assert os.path.lexists(str(path)) and not path.is_file()
        assert [p.name for p in _cached(tmp_path)] == [path.name]          # no temporary file left
    assert target.read_text() == "mine"


def test_a_class_archive_name_held_by_something_else_is_never_replaced(tmp_path):
    spark_submit, env = _fake_spark(tmp_path)
    first = sparklaunch.ClassArchive.for_spark(spark_submit, env)
    os.makedirs(first.path)                                      # a folder took its name meanwhile
    with open(first.writing, "wb") as f:
        f.write(b"archive")
    first.finish(True)
    assert os.path.isdir(first.path) and not os.path.exists(first.writing or first.path + ".x")
    assert sparklaunch.ClassArchive.for_spark(spark_submit, env) is False      # and no archive is written
