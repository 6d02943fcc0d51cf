"""A second scratch project: ``textkit``, a small JavaScript package (slugs, truncation)
inside a workspace (``packages/textkit``), tested with node's built-in runner
(``node --test``). ``base()`` holds three bugs, so three tests fail from the start."""

from __future__ import annotations

ROOT_PACKAGE = """\
{
  "name": "textkit-workspace",
  "private": true,
  "workspaces": ["packages/*"]
}
"""

PACKAGE = """\
{
  "name": "textkit",
  "version": "0.3.0",
  "description": "Small text helpers: slugs and truncation.",
  "main": "src/index.js",
  "license": "MIT",
  "scripts": {
    "test": "node --test"
  }
}
"""

README = """\
# textkit

Small text helpers.

- `slugify(text)`: a URL slug.
- `truncate(text, max)`: at most `max` characters, with an ellipsis.
"""

INDEX = """\
'use strict';

const { slugify } = require('./slug');
const { truncate } = require('./truncate');

module.exports = { slugify, truncate };
"""

# Bugs: punctuation is kept, runs of separators are not collapsed.
SLUG = """\
'use strict';

function slugify(text) {
  return text
    .trim()
    .toLowerCase()
    .replace(/\\s/g, '-');
}

module.exports = { slugify };
"""

# Bug: the ellipsis is added after `max` characters, so the result is one too long.
TRUNCATE = """\
'use strict';

const ELLIPSIS = '\\u2026';

function truncate(text, max) {
  if (text.length <= max) {
    return text;
  }
  return text.slice(0, max) + ELLIPSIS;
}

module.exports = { truncate };
"""

TEST_SLUG = """\
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { slugify } = require('../src/slug');

test('slugify lowercases and joins words', () => {
  assert.equal(slugify('Hello World'), 'hello-world');
});

test('slugify strips punctuation', () => {
  assert.equal(slugify('Hello, World!'), 'hello-world');
});

test('slugify collapses repeated separators', () => {
  assert.equal(slugify('release  --  notes'), 'release-notes');
});
"""

TEST_TRUNCATE = """\
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { truncate } = require('../src/truncate');

test('truncate keeps short text', () => {
  assert.equal(truncate('short', 10), 'short');
});

test('truncate stays within the limit', () => {
  const out = truncate('abcdefghij', 5);
  assert.equal(out.length, 5);
  assert.equal(out, 'abcd\\u2026');
});
"""

FIX_PUNCTUATION = (
    "    .toLowerCase()\n    .replace(/\\s/g, '-');",
    "    .toLowerCase()\n    .replace(/[^a-z0-9\\s-]/g, '')\n    .replace(/\\s/g, '-');",
)
FIX_COLLAPSE = ("    .replace(/\\s/g, '-');", "    .replace(/[\\s-]+/g, '-');")
FIX_TRUNCATE = ("text.slice(0, max) + ELLIPSIS", "text.slice(0, max - 1) + ELLIPSIS")

WRAP = """\
'use strict';

function wrap(text, width) {
  const lines = [];
  let line = '';
  for (const word of text.split(/\\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) {
    lines.push(line);
  }
  return lines;
}

module.exports = { wrap };
"""

TEST_WRAP = """\
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { wrap } = require('../src/wrap');

test('wrap breaks lines at word boundaries', () => {
  assert.deepEqual(wrap('the quick brown fox jumps', 10), ['the quick', 'brown fox', 'jumps']);
});

test('wrap keeps a long word on its own line', () => {
  assert.deepEqual(wrap('a extraordinarily b', 5), ['a', 'extraordinarily', 'b']);
});
"""

EDIT_INDEX_WRAP = (
    "const { truncate } = require('./truncate');\n\nmodule.exports = { slugify, truncate };",
    "const { truncate } = require('./truncate');\nconst { wrap } = require('./wrap');\n\n"
    "module.exports = { slugify, truncate, wrap };",
)
EDIT_README_WRAP = (
    "- `truncate(text, max)`: at most `max` characters, with an ellipsis.\n",
    "- `truncate(text, max)`: at most `max` characters, with an ellipsis.\n"
    "- `wrap(text, width)`: lines of at most `width` characters, broken between words.\n",
)
EDIT_PACKAGE_VERSION = ('"version": "0.3.0"', '"version": "0.4.0"')
DOCS = """\
# textkit

The workspace's text helpers live in `packages/textkit`. Run their tests with
`node --test` from that directory (Node 20 or later, no dependencies).
"""


def base() -> dict[str, str]:
    """The workspace as committed before the session starts (three failing tests)."""
    pkg = "packages/textkit/"
    return {
        "package.json": ROOT_PACKAGE,
        ".gitignore": "node_modules/\n",
        pkg + "package.json": PACKAGE,
        pkg + "README.md": README,
        pkg + "src/index.js": INDEX,
        pkg + "src/slug.js": SLUG,
        pkg + "src/truncate.js": TRUNCATE,
        pkg + "test/slug.test.js": TEST_SLUG,
        pkg + "test/truncate.test.js": TEST_TRUNCATE,
    }
