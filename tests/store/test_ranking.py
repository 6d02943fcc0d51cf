"""Ranking behaviours that make the first hit the answer: each test pits the right chunk
against a plausible decoy that a plain BM25 ranking would put first."""

from ctxmode.store import ContentStore


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


def test_module_named_in_the_query_prefers_chunks_of_that_file(store):
    store.index_text("def join(a, *p):\n    return a + '/'.join(p)\n", "lib/posixpath.py")
    store.index_text("def join(a, *p):\n    return a + '\\\\'.join(p)\n", "lib/ntpath.py")
    assert _first(store, "ntpath join")[0] == "lib/ntpath.py"
    assert _first(store, "posixpath join")[0] == "lib/posixpath.py"
