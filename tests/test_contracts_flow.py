"""The data flow of the contract inventory: which values hold what an upstream program printed, and the work it
takes to find them (a function is analysed again only when something it read has changed)."""

from __future__ import annotations

from bot.review.consumers.contracts import Contracts

CMAKE = "install(TARGETS llama-server RUNTIME DESTINATION bin)\n"

SERVER_GO = """package runner

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
)

type Server struct {
	last   string
	status string
}

func (s *Server) Start() error {
	cmd := exec.Command("llama-server", "--port", "8080")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	go s.watch(stderr)
	return cmd.Start()
}

func (s *Server) watch(r io.Reader) {
	scanner := bufio.NewScanner(r)
	for scanner.Scan() {
		s.keep(scanner.Text())
	}
}

func (s *Server) keep(line string) {
	s.last = trimmed(line)
}

func trimmed(line string) string {
	return strings.TrimSpace(line)
}
"""

STDERR = frozenset({"llama-server --port 8080 stderr"})


def _flow():
    return Contracts(
        {"go.mod": "module example.com/ollama\n", "CMakeLists.txt": CMAKE, "runner/server.go": SERVER_GO}
    ).flow


def test_a_value_is_followed_through_calls_results_and_fields():
    flow = _flow()
    assert flow.envs[("runner", "Server", "keep")]["line"] == STDERR
    assert flow.returns[("runner", "", "trimmed")] == {0: STDERR}
    assert flow.fields[("runner", "last")] == STDERR


def test_a_function_is_analysed_again_only_when_what_it_read_changed():
    """`keep` is analysed again once `trimmed`'s result is known; its store into `s.last` then offers every
    function of the package again, and none of them reads that field: four functions, five analyses."""
    flow = _flow()
    assert len(flow.funcs) == 4
    assert flow.analyses == 5


GROUPED_GO = """package runner

import (
	"os"
	str "strings"
)

var (
	home, _ = os.UserHomeDir()
	mode    = str.ToLower("Fast")
)

const port = 8080

type (
	Options struct{ Threads int }
	alias   = Options
)

func (o Options) Args() []string {
	type local struct{ hidden int }
	var inner = 1
	_ = inner
	return nil
}
"""


def test_grouped_declarations_are_read_and_locals_are_not_package_level():
    program = Contracts({"go.mod": "module example.com/ollama\n", "runner/a.go": GROUPED_GO}).resolver.program
    assert program.imports_of("runner/a.go") == {"os": "os", "str": "strings"}
    assert [program.value("runner", n) is not None for n in ("home", "mode", "port", "inner")] == [
        True,
        True,
        True,
        False,
    ]
    assert program.type_decl("runner", "Options") is not None
    assert program.type_decl("runner", "local") is None
    assert [f.name for f in program.methods_named("runner/a.go", "Args")] == ["Args"]


def test_a_file_the_parser_reads_with_an_error_still_gives_its_declarations():
    broken = GROUPED_GO + "\nfunc Broken( {\n\nfunc After() int { return port }\n"
    program = Contracts({"go.mod": "module example.com/ollama\n", "runner/a.go": broken}).resolver.program
    assert program.value("runner", "port") is not None
    assert program.type_decl("runner", "Options") is not None


RUNNER_GO = """package runner

import (
	"context"
	"os/exec"
	"strings"
)

func Serve(ctx context.Context) error {
	return exec.CommandContext(ctx, "llama-server", "--port", "8080").Start()
}

func Clean(name string) string {
	return strings.TrimSpace(name)
}
"""


def test_a_command_is_found_and_the_functions_that_name_none_are_not_read():
    contracts = Contracts(
        {"go.mod": "module example.com/ollama\n", "CMakeLists.txt": CMAKE, "runner/run.go": RUNNER_GO}
    )
    assert [(c.func.name, c.program) for c in contracts.commands] == [("Serve", "llama-server")]
    package = contracts.resolver.program.package("runner")
    read = {f.name: "captured" in vars(f) for f in package.functions_in("runner/run.go")}
    assert read == {"Serve": True, "Clean": False}


CALLERS = {
    "go.mod": "module example.com/ollama\n",
    "runner/a.go": """package runner

type T struct{}

func (t T) Method() string { return target("method") }

func unrelated() int { return len("x") }
""",
    "runner/b.go": """package runner

func plain() string { return target("plain") }

func target(s string) string { return s }
""",
}


def test_call_sites_come_in_the_packages_function_order_and_only_functions_naming_the_callee_are_read():
    resolver = Contracts(CALLERS).resolver
    package = resolver.program.package("runner")
    (target,) = package.functions_named("target")
    sites = resolver.call_sites(target)
    assert [caller.name for caller, _ in sites] == ["plain", "Method"]  # functions, then methods
    (unrelated,) = package.functions_named("unrelated")
    assert "captured" not in vars(unrelated)
