"""Where Ollama's Go code uses a field an item cites by its declaration."""

from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.consumers.gofields import reading, with_field_lines

GO = """package llm

type chatChoice struct {
	Delta struct {
		Content string `json:"content"`
	} `json:"delta"`
	Index int `json:"index"`
}

func read(choice chatChoice) string {
	if choice.Index > 0 {
		return ""
	}
	return choice.Delta.Content
}

func other(err error) string { return err.Delta() }
"""


def _cited(line: int) -> list[tuple[str, int]]:
    draft = Draft("server", "medium", "t", "d", "x.cpp", 1, local_refs=(LocalRef("llm/s.go", line),))
    return [(r.path, r.line) for r in with_field_lines(draft, {"llm/s.go": GO}, reading).local_refs]


def test_a_tagged_field_cites_the_lines_that_read_it():
    assert _cited(7) == [("llm/s.go", 7), ("llm/s.go", 11)]


def test_a_field_of_an_anonymous_struct_type_cites_its_reads_too():
    """`Delta struct {` carries its tag after the closing brace; a method of that name is no read."""
    assert _cited(4) == [("llm/s.go", 4), ("llm/s.go", 14)]


CHUNKS = """package llm

type chunk struct {
	Content string `json:"content"`
	Stop    bool   `json:"stop"`
}

func read(c chunk, out func(string)) {
	if c.Content != "" && !c.Stop {
		out(c.Content)
	}
	if c.Stop {
		out("final: " + c.Content)
	}
}
"""


def test_an_item_citing_a_flag_cites_the_reads_in_the_branch_taken_on_it():
    """An item about the final chunk cites `Stop` beside `Content`: the reads of `Content` in `if c.Stop {`
    come first, not those in the branch taken when it is false."""
    refs = (LocalRef("llm/c.go", 4), LocalRef("llm/c.go", 5))
    draft = Draft("streaming", "medium", "t", "d", "x.cpp", 1, local_refs=refs)
    cited = [r.line for r in with_field_lines(draft, {"llm/c.go": CHUNKS}, reading).local_refs]
    assert cited == [4, 5, 13, 9, 12]
    alone = Draft("streaming", "medium", "t", "d", "x.cpp", 1, local_refs=refs[:1])
    cited = [r.line for r in with_field_lines(alone, {"llm/c.go": CHUNKS}, reading).local_refs]
    assert cited == [4, 9, 10, 13]
