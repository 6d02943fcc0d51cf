"""Ranking behaviours that make the first hit the answer: each test pits the right chunk
against a plausible decoy that a plain BM25 ranking would put first."""

import pytest

from ctxmode.store import ContentStore
from ctxmode.store import query as q
from ctxmode.store.excerpt import TOP_BYTES
from ctxmode.store.ranking import Scorer


def _first(store: ContentStore, query: str) -> tuple[str, str]:
    hit = store.search(query, limit=3).hits[0]
    return hit.source, hit.title


def test_dotted_reference_finds_the_definition_not_a_usage(store):
    store.index_text(
        "def dedent(text):\n    '''Remove any common leading whitespace.'''\n"
        "    return _strip(text)\n",
        "lib/textwrap.py",
    )
    store.index_text(
        "import textwrap\n\n\ndef _dedent(text):\n    # wraps textwrap.dedent for us\n"
        "    return textwrap.dedent(text).strip()\n",
        "lib/enum.py",
    )
    assert _first(store, "textwrap.dedent") == ("lib/textwrap.py", "def dedent")


def test_class_dot_method_reference_resolves_inside_the_class(store):
    ratio = "    def ratio(self):\n" + "        total += 1\n" * 120
    opcodes = "    def get_opcodes(self):\n" + "        pass\n" * 250
    store.index_text(f"class SequenceMatcher:\n{ratio}\n{opcodes}", "difflib.py")
    store.index_text(
        "def report(a, b):\n    sm = SequenceMatcher(None, a, b)\n    ops = sm.get_opcodes()\n",
        "report.py",
    )
    source, title = _first(store, "SequenceMatcher.get_opcodes")
    assert (source, title) == ("difflib.py", "class SequenceMatcher > def get_opcodes")


def test_exact_definition_name_beats_a_private_lookalike(store):
    helper = "def _copytree(entries, src, dst):\n" + "    copy_entry(entries)\n" * 20
    public = "def copytree(src, dst):\n" + "    check_arguments(src, dst)\n" * 20
    store.index_text(helper + "\n\n" + public, "shutil.py")
    assert _first(store, "copytree")[1] == "def copytree"
    assert _first(store, "copytr")[1] == "def copytree"  # a fragment names the start


def test_pasted_error_message_finds_the_line_that_raises_it(store):
    store.index_text(
        "def parse_object(s, end):\n    if s[end] != '\"':\n"
        "        raise DecodeError('Expecting property name enclosed in double quotes', s, end)\n",
        "decoder.py",
    )
    store.index_text(
        "class DecodeError(ValueError):\n    '''Raised for a property name, quotes or a"
        " double value that cannot be decoded; see the enclosed position.'''\n",
        "errors.py",
    )
    query = "DecodeError: Expecting property name enclosed in double quotes: line 1 column 2"
    assert _first(store, query) == ("decoder.py", "def parse_object")


def test_verbatim_message_with_punctuation_ranks_its_source_first(store):
    store.index_text(
        "def handle_error(record):\n    sys.stderr.write('--- Logging error ---\\n')\n",
        "logging.py",
    )
    store.index_text(
        "class Logger:\n    def error(self, msg):\n        '''Log msg with severity error.'''\n"
        "        self._log(ERROR, msg)\n",
        "logger.py",
    )
    assert _first(store, "--- Logging error ---")[1] == "def handle_error"


def test_developer_synonyms_bridge_folder_and_directory(store):
    store.index_text("# rmtree\nRecursively delete a directory tree.\n", "shutil.md")
    store.index_text("# colours\nPick a colour for the theme.\n", "theme.md")
    assert _first(store, "delete folder")[0] == "shutil.md"


def test_a_british_spelling_finds_the_american_one(store):
    store.index_text("# theme\nPick a font for the theme.\n", "fonts.md")
    store.index_text("# paint\nMix the colour of the paint.\n", "paint.md")  # colour is known
    store.index_text("# theme\nPick a color for the theme.\n", "theme.md")
    assert _first(store, "theme colour")[0] == "theme.md"


def test_module_named_in_the_query_prefers_chunks_of_that_file(store):
    store.index_text("def join(a, *p):\n    return a + '/'.join(p)\n", "lib/posixpath.py")
    store.index_text("def join(a, *p):\n    return a + '\\\\'.join(p)\n", "lib/ntpath.py")
    assert _first(store, "ntpath join")[0] == "lib/ntpath.py"
    assert _first(store, "posixpath join")[0] == "lib/posixpath.py"


def _background(store: ContentStore, n: int = 30) -> None:
    """Chunks using the common words of the tests below, so that they are common."""
    for i in range(n):
        store.index_text(
            f"def helper_{i}(path):\n    value = get(path)\n    return file_value(value)\n",
            f"lib/helper_{i}.py",
        )


def test_rare_terms_covered_beat_common_words_repeated(store):
    _background(store)
    store.index_text(
        "def read_all(path):\n"
        + "    value = get_file(path).value  # get the file value at path\n" * 12
        + "    return value\n",
        "lib/reader.py",
    )
    store.index_text(
        "def verify(blob, digest):\n"
        "    '''Compare the checksum of a download with the published digest.'''\n"
        "    if sha256(blob) != digest:\n"
        "        raise IntegrityError('checksum mismatch')\n",
        "lib/verify.py",
    )
    # No chunk holds every term; the decoy holds more of them (file, value, path), the
    # answer the rare ones (checksum, mismatch).
    query = "how do I get the file value at a path when the checksum has a mismatch"
    hit = store.search(query).hits[0]
    assert hit.source == "lib/verify.py"
    assert "checksum mismatch" in hit.snippet


def test_the_excerpt_shows_the_line_with_the_rare_term(store):
    _background(store)
    body = ["def configure(options):"]
    body += [f"    value_{i} = options.get('file_{i}')  # get the file value" for i in range(40)]
    body.insert(30, "    timeout = options.get('handshake_timeout', 10)  # TLS handshake limit")
    store.index_text("\n".join(body) + "\n", "lib/config.py")
    hit = store.search("get the file value for the handshake").hits[0]
    assert "handshake_timeout" in hit.snippet
    assert len(hit.snippet.encode("utf-8")) <= TOP_BYTES


def test_question_words_and_filler_do_not_rank(store):
    store.index_text("# Caching\n\nHow do I make it what it is? Do I? What do I make?\n", "faq.md")
    store.index_text(
        "# Invalidation\n\nSend Cache-Control headers so stale pages expire.\n", "c.md"
    )
    assert _first(store, "how do I make stale pages expire")[0] == "c.md"


def test_an_identifier_query_still_finds_its_definition_first(store):
    _background(store)
    store.index_text(
        "def get_terminal_size(fallback=(80, 24)):\n    '''Get the size of the terminal.'''\n",
        "lib/shutil.py",
    )
    store.index_text(
        "def report():\n    size = get_terminal_size()\n    print(size, 'terminal size')\n",
        "lib/report.py",
    )
    assert _first(store, "get_terminal_size") == ("lib/shutil.py", "def get_terminal_size")
    assert _first(store, "shutil.get_terminal_size") == ("lib/shutil.py", "def get_terminal_size")
    assert _first(store, "get_terminal_sise") == ("lib/shutil.py", "def get_terminal_size")


def test_weights_change_nothing_for_a_chunk_holding_every_term():
    parsed = q.parse_query("parse args")
    chunk = ("lib/cli.py", "def parse_args", "def parse_args(argv):\n    return parse(args)\n")
    plain = Scorer(parsed, {}, {}).score(1.0, *chunk, "code")
    weighted = Scorer(parsed, {}, {}, [7.5, 0.4]).score(1.0, *chunk, "code")
    assert weighted == pytest.approx(plain)


def test_a_question_in_other_words_finds_the_related_words_chunk(store: ContentStore) -> None:
    _background(store)
    store.index_text(
        "def ring(console):\n    '''Play the bell sound of the terminal.'''\n"
        "    console.write('\\a')\n",
        "lib/console.py",
    )
    store.index_text(
        "def paint(terminal):\n    '''Pick the colours a terminal shows for the user.'''\n"
        "    return terminal.palette\n",
        "lib/colours.py",
    )
    assert _first(store, "make the terminal beep for the user") == ("lib/console.py", "def ring")


def test_a_word_the_thesaurus_knows_is_not_corrected_as_a_typo(store: ContentStore) -> None:
    # `beep` is one edit from `deep`, which the knowledge base holds; it is a word, not a typo.
    _background(store)
    store.index_text("def copy_tree(node):\n    '''Make a deep copy of the tree.'''\n", "lib/t.py")
    store.index_text(
        "def ring(console):\n    '''Play the bell sound of the terminal.'''\n", "lib/console.py"
    )
    result = store.search("make the terminal beep for the user")
    assert result.corrections == {}
    assert (result.hits[0].source, result.hits[0].title) == ("lib/console.py", "def ring")
    assert store.search("deeep").corrections == {"deeep": "deep"}


def test_an_inflection_of_a_known_word_is_not_corrected_as_a_typo(store: ContentStore) -> None:
    # `dropping` is one edit from `cropping`; it is `drop`, which porter stemming matches.
    store.index_text("def drop(rows):\n    '''Drop the given rows.'''\n", "lib/rows.py")
    store.index_text("cropping photos is covered elsewhere\n", "notes")
    result = store.search("dropping")
    assert result.corrections == {}
    assert [h.source for h in result.hits] == ["lib/rows.py"]


def test_an_identifier_query_is_not_expanded_to_related_words(store: ContentStore) -> None:
    store.index_text("def remove_folder(path):\n    shutil.rmtree(path)\n", "lib/a.py")
    store.index_text("def erase_directory(path):\n    shutil.rmtree(path)\n", "lib/b.py")
    hits = store.search("remove_folder", limit=5).hits
    assert [h.source for h in hits] == ["lib/a.py"]
    assert all(h.layer != "related" for h in store.search("remove folder path", limit=5).hits)


@pytest.mark.parametrize(
    ("query", "own", "decoy"),
    [
        # a name's own definition before the definitions nested in it
        ("namedtuple", "def namedtuple", "def namedtuple > def __repr__"),
        # consecutive words spelling one name
        ("temporary directory", "class TemporaryDirectory", "def temporary_directory_path"),
        # a title listing several definitions defines each of them
        (
            "getstate",
            "class Random > def getstate, class Random > def setstate",
            "class Random > def getstate > def helper",
        ),
    ],
)
def test_the_title_defining_the_name_asked_for_wins(query, own, decoy) -> None:
    scorer = Scorer(q.parse_query(query), {}, {})
    body = '    """A temporary directory, a namedtuple."""\n    return make()\n'
    mine = scorer.score(1.0, "lib.py", own, body, "code")
    assert mine > scorer.score(1.0, "lib.py", decoy, body, "code")


def test_a_word_naming_the_file_finds_a_definition_that_never_says_it(store) -> None:
    steps = "".join(f"    step_{i} = check(address, {i})\n" for i in range(40))
    store.index_text(
        "def ip_network(address, strict=True):\n"
        '    """Take an IP string and return a network object."""\n'
        f"{steps}    return IPv4Network(address, strict)\n\n\n"
        "class IPv4Network:\n"
        '    """Built by ipaddress.ip_network, the factory."""\n' + steps.replace("step_", "part_"),
        "lib/ipaddress.py",
    )
    hits = store.search("ipadress ip_netwrok", limit=3).hits  # both misspelt
    assert (hits[0].source, hits[0].title) == ("lib/ipaddress.py", "def ip_network")


def test_a_module_and_a_name_as_words_find_the_definition_not_a_usage(store) -> None:
    store.index_text(
        "def dedent(text):\n    '''Remove any common leading whitespace.'''\n"
        "    return _strip(text)\n",
        "lib/textwrap.py",
    )
    store.index_text(
        "import textwrap\n\n\ndef banner(text):\n    return textwrap.dedent(text).strip()\n",
        "lib/banner.py",
    )
    assert _first(store, "textwrap dedent") == ("lib/textwrap.py", "def dedent")
    assert _first(store, "textwrap dedetn") == ("lib/textwrap.py", "def dedent")  # a typo


def test_a_dotted_reference_finds_a_definition_that_never_names_its_module(store) -> None:
    store.index_text(
        "def lru_cache(maxsize=128, typed=False):\n"
        '    """Least-recently-used cache decorator."""\n'
        "    return decorating_function\n",
        "lib/functools.py",
    )
    for i in range(15):  # enough usages that the words together are not thin
        store.index_text(
            f"import functools\n\n\n@functools.lru_cache\ndef load_{i}(key):\n"
            f"    return read(key, {i})\n",
            f"app/use{i}.py",
        )
    assert _first(store, "functools.lru_cache") == ("lib/functools.py", "def lru_cache")
