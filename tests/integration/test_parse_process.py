"""spaCy parses in the child process are the docs an in-process parse gives, in order, for
everything the judge and the extractor read; a dead child is replaced. No server, but each
test starts processes that load spaCy (~2 s each): integration, not the unit suite."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pcm_common.extract import parse_process
from pcm_common.extract.local import LocalExtractor
from pcm_common.extract.parsing import load_pipeline
from pcm_common.judge.local import _toks

pytestmark = pytest.mark.slow

TEXTS = [
    "Alice flew to Berlin on Monday and stays for 3 nights.",
    "Ran 5 km in 27:10 this morning along the river.",
    "We moved the billing service from MySQL to Postgres last March.",
    "Paid $42.50 for groceries at the Lidl on Main Street.",
    "",
    "Dr. Smith said the results look fine. Next check-up in six months!",
]


def signature(doc: Any) -> list[Any]:
    tokens = [
        (
            t.text,
            t.whitespace_,
            t.lemma_,
            t.pos_,
            t.tag_,
            t.dep_,
            t.head.i,
            str(t.morph),
            t.ent_type_,
            t.ent_iob_,
            t.is_stop,
            t.like_num,
            t.is_sent_start,
        )
        for t in doc
    ]
    return [doc.text, tokens, [(e.text, e.label_) for e in doc.ents], [s.start for s in doc.sents]]


@pytest.fixture
def in_child(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PCM_PARSE_PROCESS", "true")


def test_child_parses_are_the_in_process_parses(in_child: None) -> None:
    here = list(load_pipeline().pipe(TEXTS))
    there = parse_process.parse(TEXTS)
    assert [signature(d) for d in there] == [signature(d) for d in here]
    assert parse_process.parse([]) == []


def test_judge_tokens_and_extractions_do_not_depend_on_where_texts_are_parsed(
    in_child: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    nlp = load_pipeline()
    lemmatizer = nlp.get_pipe("lemmatizer")
    child_toks = [_toks(d, lemmatizer) for d in parse_process.parse(TEXTS)]
    child_facts = LocalExtractor().extract_many_sync(TEXTS)
    monkeypatch.setenv("PCM_PARSE_PROCESS", "false")
    assert child_toks == [_toks(d, lemmatizer) for d in nlp.pipe(TEXTS)]
    assert child_facts == LocalExtractor().extract_many_sync(TEXTS)


def test_a_dead_child_is_replaced(in_child: None) -> None:
    parse_process.parse(["first"])
    pool = parse_process._executor()
    for proc in list(pool._processes.values()):
        proc.kill()
        proc.join()
    # The call that finds it dead parses here; the next one starts a new child.
    assert [d.text for d in parse_process.parse(TEXTS[:2])] == TEXTS[:2]
    assert [d.text for d in parse_process.parse(TEXTS[2:4])] == TEXTS[2:4]
    assert parse_process._executor() is not pool
    parse_process.shutdown()


def test_a_single_query_is_parsed_in_process(
    in_child: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recall's query (`extract`) never waits behind a batch in the parse process."""

    def no_child(texts: Any, batch_size: int = 256) -> list[Any]:
        raise AssertionError("a single text went to the parse process")

    monkeypatch.setattr(parse_process, "parse", no_child)
    names = {e.name for e in LocalExtractor().extract_sync(TEXTS[0]).entities}
    assert {"Alice", "Berlin"} <= names


def test_the_child_exits_when_its_parent_is_killed() -> None:
    """A PCM process killed outright (SIGKILL) does not leave its parse process behind."""
    script = (
        "import os, sys\n"
        "os.environ['PCM_PARSE_PROCESS'] = 'true'\n"
        "from pcm_common.extract import parse_process\n"
        # Starts the child (and its watch on the parent) without loading spaCy on either
        # side: a parse loaded the pipeline in both, ~2 s each, for nothing tested here.
        "pool = parse_process._executor()\n"
        "pool.submit(os.getpid).result()\n"
        "print(*pool._processes, flush=True)\n"
        "sys.stdin.read()\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    (child,) = (int(p) for p in parent.stdout.readline().split())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.1)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; its reaper (init) collects it


def test_shutdown_waits_for_the_child(in_child: None) -> None:
    parse_process.parse(["first"])
    procs = list(parse_process._executor()._processes.values())
    assert procs and all(p.is_alive() for p in procs)
    parse_process.shutdown()
    assert not any(p.is_alive() for p in procs)
    parse_process.shutdown()  # nothing left to stop: a no-op
