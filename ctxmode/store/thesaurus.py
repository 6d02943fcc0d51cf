"""A developer thesaurus: words a question may use for what code or docs call otherwise.

Questions in an agent's or user's own words often share few words with their answer
("throwaway folder" for a temporary directory, "beep" for the terminal bell). Each group
below holds general programming vocabulary used interchangeably; a word of a question is
expanded to the other words of its groups (`related`). Unlike `text.SYNONYMS`, which every
query matches at full weight, these expansions apply only to the rare terms of a question
in words (`query.is_question`) that no chunk answers with all of its words
(`ContentStore._related_words`), and weigh below the words as written
(`ranking.W_RELATED`), so keyword, identifier, error and typo queries are unaffected and a
chunk using the question's own words still outranks one using only a related word. The
groups were written as general vocabulary, not from the judged questions of
``benchmarks/retrieval_eval.py``.
"""

from ctxmode.store.text import SYNONYMS

# One group a line, words separated by spaces. A word may sit in several groups.
_GROUPS = """
delete remove erase unlink drop discard purge
remove strip trim
folder directory dir
file document
create make new generate build construct
copy duplicate clone replicate
move rename relocate
beep bell alert chime
throwaway temporary temp tmp scratch disposable ephemeral
stale expired outdated obsolete invalidate
cache memoize memoise
quit exit terminate stop halt abort
kill terminate signal
start begin launch spawn run invoke
restart reload reboot
pause sleep wait delay suspend
resume continue
timeout deadline expiry
error exception failure fault
warning warn caution
crash panic abort
bug defect issue
fix patch repair
check verify validate test assert
compare diff difference
equal same identical equivalent
similar close fuzzy approximate
find search lookup locate seek grep
filter select exclude include
sort order arrange rank
reverse invert backwards flip
merge combine join concatenate concat
split divide separate partition chunk tokenize
replace substitute swap
pad fill
truncate shorten clip cut
wrap fold indent
shorten abbreviate
uppercase capitalize capitalise upper
lowercase lower
whitespace blank space spaces
newline linebreak eol
tab indentation
escape quote sanitize
unescape unquote
encode serialize serialise dump marshal
decode deserialize deserialise parse unmarshal load
format render template print display show
read load open fetch get retrieve
write save store persist dump put
append add push attach
prepend insert
pop dequeue
queue fifo
stack lifo
list array sequence
dict dictionary map mapping hash hashmap
set unique distinct dedupe deduplicate
tuple pair record
string text str
number integer int numeric digit
float decimal fraction real
boolean bool flag
null none nil empty missing
default fallback initial
optional maybe
count tally number
sum total add
average mean
median middle
maximum max largest biggest highest
minimum min smallest lowest
random shuffle sample choice
round rounding nearest
time clock timestamp
date day calendar
duration interval elapsed period
schedule cron timer periodic
now current today
timezone tz utc offset
password secret credential passphrase
login authenticate signin
logout signout
user account
permission access privilege mode
owner ownership chown
encrypt cipher encryption secure tls ssl
decrypt decipher
hash digest checksum fingerprint
sign signature hmac
token key
compress zip gzip deflate archive pack
decompress unzip gunzip inflate extract unpack
tar tarball archive
download fetch retrieve
upload send post push
request call query
response reply answer result
server host daemon service
client browser
url address link uri href
web http https website site internet
page webpage html document
email mail smtp message
port socket
network net connection
connect dial open
disconnect close hangup
proxy gateway forward
header headers metadata
cookie session
redirect forward
status code
json jsonl
yaml yml
csv spreadsheet tabular comma delimited
xml markup
config configuration settings options preferences conf ini
option flag switch argument
argument arg parameter param
variable var
environment env environ
path filepath filename location
extension suffix
prefix beginning start
suffix ending end
absolute full
parent ancestor
child children descendant
nested recursive recursively tree walk traverse
iterate loop traverse enumerate
generator iterator lazy yield
callback hook handler listener
event signal notification
log logging logger journal trace record
debug debugger breakpoint inspect
profile profiler benchmark timing measure
memory ram heap
disk storage drive
size length bytes
big large huge
small tiny little
fast quick speedy efficient
slow sluggish
speed performance throughput
limit cap throttle quota maximum
retry again repeat attempt
thread threading concurrent parallel
process subprocess child
async asynchronous await coroutine nonblocking
sync synchronous blocking
lock mutex semaphore
shared common global
local private internal
public exported external
import include require load
module package library lib
install setup
uninstall remove
upgrade update bump
version release revision
downgrade rollback revert
undo revert rollback
redo repeat
history log past
backup snapshot copy
restore recover
terminal console shell tty
command cmd instruction
output stdout print
input stdin prompt
stderr error
color colour
bold emphasis strong
table grid
column col field
row line record entry
progress bar spinner
screen display monitor window
keyboard key keystroke
mouse click pointer
image picture photo bitmap png jpeg
audio sound
video movie
chart graph plot
id identifier uuid guid
name label title
description summary docstring doc
comment annotation remark
documentation docs manual reference
example sample demo
tutorial guide
type kind class
instance object
attribute property field member
method function routine procedure func def
constructor init initializer
destructor finalizer cleanup teardown
abstract interface protocol base
inherit subclass extend derive
override overwrite
wrapper decorator
generic template
convert transform cast coerce translate
wildcard glob pattern
regex regexp regular expression
match matches matching
contains includes has
exists present available
ignore skip bypass
allow permit whitelist allowlist
deny block forbid blacklist blocklist reject
enable activate turn
disable deactivate off
show display reveal
hide conceal mask
visible shown
hidden invisible
clear reset wipe flush empty
refresh reload update
sync synchronize mirror
watch monitor observe poll
notify alert inform
mock fake stub dummy double
fixture setup
isolated sandbox sandboxed separate
coverage covered
lint linter style
minify compress
escape sanitize clean
clean tidy
dirty modified changed
change modify alter edit
unchanged untouched
current working cwd
home user
root top
list ls enumerate listing
size du usage
free available unused
used occupied
cpu processor core
gpu graphics
machine computer host system
platform os operating
linux unix posix
windows win32
mac macos darwin osx
binary executable exe program
source code
compile build
interpret eval evaluate execute
execute exec run
pipe pipeline stream
buffer buffered
flush sync
encoding charset codec
unicode utf8 utf
ascii plain
byte bytes octet
bit bits
endian byteorder
checksum crc
base64 b64
hex hexadecimal
binary bin
octal oct
signed unsigned
overflow wraparound
precision accuracy
exact precise
approximate estimate rough
mistake typo
suggest recommend propose
correct right valid
incorrect wrong invalid bad
broken corrupt damaged
empty blank void
full complete whole entire
partial incomplete
first initial leading head
last final trailing tail end
next following subsequent
previous prior preceding
before pre
after post
above over
below under
inside within
outside external
between among
around surrounding
"""

MAX_RELATED = 8  # words a term is expanded to, at most


def _build() -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}
    for line in _GROUPS.strip().splitlines():
        words = line.split()
        for word in words:
            known = table.setdefault(word, [])
            known.extend(w for w in words if w != word and w not in known)
    return {
        word: tuple(w for w in others if w not in SYNONYMS.get(word, ()))[:MAX_RELATED]
        for word, others in table.items()
    }


RELATED: dict[str, tuple[str, ...]] = _build()

# Inflections looked up by their base form (folders → folder, deleting → delete).
_SUFFIXES = (
    ("ies", "y"),
    ("es", ""),
    ("s", ""),
    ("ing", ""),
    ("ing", "e"),
    ("ed", ""),
    ("ed", "e"),
    ("d", ""),
)


def related(word: str) -> tuple[str, ...]:
    """The words related to `word` (or to its base form), none when it has no group."""
    found = RELATED.get(word)
    if found is not None:
        return found
    for suffix, base in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            found = RELATED.get(word[: -len(suffix)] + base)
            if found is not None:
                return found
    return ()
