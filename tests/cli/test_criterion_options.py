"""The options the commands add per criterion of the registry (profiler.cli.arguments.
add_criteria_options): a plugin's criterion named with '_' takes the option in either spelling,
and an option or --group value naming a criterion no plugin loaded says where plugins are named."""

import pytest

from profiler import contract
from profiler.cli import main as cli
from profiler.model import criteria

from helpers.registries import keep

TLD_LENGTH = criteria.Criterion(
    "tld_length", "urlkey", (criteria.Level("chars", criteria.IDENTITY),), ("chars",),
    lambda field: ("chars",), ("2",), r"-|[1-9]|10\+|unk", "'-', 1 to 9, 10+ or unk", optional=True,
    derive=lambda urlkey: str(len(urlkey.split(",", 1)[0])))


@pytest.fixture
def registered(monkeypatch):
    keep(monkeypatch)
    criteria.register(TLD_LENGTH)


@pytest.mark.parametrize("command", cli.CRITERIA_COMMANDS)
@pytest.mark.parametrize("spelling", ["--tld_length", "--tld-length"])
def test_a_name_with_an_underscore_is_an_option_in_either_spelling(registered, command, spelling):
    parser = cli.build_parser([command])
    positionals = {"query": ["p.cdxj"], "lookup": ["p.cdxj", "http://a.example/"], "overlap": ["a", "b"]}[command]
    args = cli.parse(parser, [command] + positionals + [spelling, "2"])
    assert args.tld_length == "2"


@pytest.mark.parametrize("argv", [
    ["query", "p.cdxj", "--weekday", "sat"],
    ["query", "p.cdxj", "--group", "weekday"],
    ["lookup", "p.cdxj", "http://a.example/", "--tld-length=2"],
    ["overlap", "a", "b", "--weekday", "sat"],
])
def test_an_option_of_a_criterion_not_loaded_names_the_plugins_variable(argv, capsys):
    with pytest.raises(SystemExit) as e:
        cli.parse(cli.build_parser(argv), argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and len(err.splitlines()) == 1
    assert "a plugin's criterion? name its module in %s" % contract.PLUGINS_ENV in err


@pytest.mark.parametrize("argv", [
    ["query", "p.cdxj", "--top", "x"],          # not a name a criterion may have
    ["query", "p.cdxj", "--group", "Bad"],
    ["query", "p.cdxj", "--lines"],             # reserved: a command's own
    ["profile", "x.cdx", "--weekday", "sat"],   # profile takes no option per criterion
])
def test_other_usage_mistakes_get_no_plugin_hint(argv, capsys):
    with pytest.raises(SystemExit):
        cli.parse(cli.build_parser(argv), argv)
    assert "plugin" not in capsys.readouterr().err


@pytest.mark.parametrize("argv, hint", [
    (["query", "p.cdxj", "--year", "2013"], "a year or month is --datetime (--datetime 2013"),
    (["lookup", "p.cdxj", "http://a.example/", "--year", "2013"], "a year or month is --datetime"),
    (["query", "p.cdxj", "--host", "www.cnn.com"], "a host, domain or URL is query's --surt in its SURT form"),
    (["query", "p.cdxj", "--url", "http://a.example/"], "lookup takes the URL after the file"),
    (["query", "p.cdxj", "--group", "host"], "by host: --group surt --level host"),
    (["query", "p.cdxj", "--group", "year"], "by year: --group datetime"),
    (["query", "p.cdxj", "--language", "fra"], "the language is --lang"),
])
def test_a_guessed_criterion_option_names_the_one_to_use(argv, hint, capsys):
    """A newcomer's guess (--year, --host, --group host) says which option asks it, not that a
    plugin may be missing."""
    with pytest.raises(SystemExit) as e:
        cli.parse(cli.build_parser(argv), argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and len(err.splitlines()) == 1
    assert hint in err and "plugin" not in err


@pytest.mark.parametrize("text, hint", [
    ("2013-2014", "; a range is query's --from 2013 --to 2014"),
    ("2013:2014", "; a range is query's --from 2013 --to 2014"),
    ("201305..201402", "; a range is query's --from 201305 --to 201402"),
    ("abc", None),
])
def test_a_range_given_to_datetime_names_from_and_to(text, hint):
    from profiler.cli import arguments
    from profiler.errors import UserError
    with pytest.raises(UserError) as e:
        arguments.asked(criteria.DATETIME, text)
    assert str(e.value).startswith("--datetime: not a datetime value")
    assert (hint in str(e.value)) if hint else "range" not in str(e.value)


@pytest.mark.parametrize("argv, hint", [
    (["profile", "x.cdx", "-o", "p.cdxj", "--lang"], "languages: --policy lang"),
    (["profile", "x.cdx", "-o", "p.cdxj", "--jobs", "2"], "processes: -r local --cores N"),
    (["serve", "m.ukvs", "--bind=0.0.0.0"], "the address to listen on: --host"),
    (["explore", "p.cdxj", "--listen", "::"], "the address to listen on: --host"),
])
def test_a_guessed_option_of_another_command_names_the_one_to_use(argv, hint, capsys):
    with pytest.raises(SystemExit) as e:
        cli.parse(cli.build_parser(argv), argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and len(err.splitlines()) == 1 and hint in err, err
