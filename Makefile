# dshctl — see README.md. Every target works on a fresh machine with Go 1.26.
GO        ?= go
BIN       ?= bin/dshctl
FUZZTIME  ?= 2m
# Minimising each new input can take a minute (the default): a short run
# then spends its time minimising instead of fuzzing. 0 keeps inputs as
# found; failing inputs are still saved under testdata/fuzz.
FUZZMINIMIZE ?= 0
# The targets each of whose executions builds, reads, verifies or appends
# to a whole store: seconds go on their baseline corpus, so CI gives them
# FUZZTIMESLOW to fuzz at all.
FUZZSLOW     ?= FuzzReadPlain FuzzReadZstd FuzzVerifyPlain FuzzVerifyZstd
FUZZTIMESLOW ?= $(FUZZTIME)
CRASHRUNS ?= 200
PKGS      := ./...

MANDIR    ?= man

.PHONY: all build test vet fmtcheck cross demo man bench fuzz crash ci clean compat race

all: build

# The build is stamped with git's description of the checkout (dshctl
# --version): builds that record no VCS information themselves
# (-buildvcs=false, GOFLAGS) still name their commit. Without a tag the
# version is the pseudo-version Go gives a build of the checkout
# (v0.0.0-<commit time>-<commit>, +dirty when modified). Outside a git
# checkout the stamps are empty and Go's build information is shown.
BUILDINFO   := github.com/dshctl/dshctl/internal/buildinfo
COMMIT      ?= $(shell git rev-parse HEAD 2>/dev/null)
COMMIT_TIME ?= $(shell TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd 2>/dev/null)
MODIFIED    ?= $(shell git status --porcelain 2>/dev/null | grep -q . && echo true)
PSEUDO      := $(shell TZ=UTC git log -1 --date=format-local:%Y%m%d%H%M%S --format=v0.0.0-%cd-%H 2>/dev/null | cut -c1-34)
VERSION     ?= $(or $(shell git describe --tags --dirty 2>/dev/null),$(if $(PSEUDO),$(PSEUDO)$(if $(MODIFIED),+dirty)))
LDFLAGS     := -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).commit=$(COMMIT) \
               -X $(BUILDINFO).commitTime=$(COMMIT_TIME) -X $(BUILDINFO).modified=$(MODIFIED)

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/dshctl

# The full test suite: vet, formatting, unit, contract and testscript tests.
# The timeout leaves room for a loaded machine (the suite takes minutes).
test: vet fmtcheck
	$(GO) test -count=1 -timeout=30m $(PKGS)

vet:
	$(GO) vet $(PKGS)

# dshctl builds on Linux, macOS and Windows: cross-check the other two.
cross:
	GOOS=windows $(GO) build $(PKGS)
	GOOS=windows $(GO) vet $(PKGS)
	GOOS=darwin $(GO) vet $(PKGS)

# What dshctl writes, the real dsh reads and appends to; races of dsh's
# writer and dshctl end with a log dsh accepts or dshctl refusing (issue
# 20). Installs ../shared/dsh-oracle with npm into a temporary folder.
compat:
	scripts/compat.sh

fmtcheck:
	@out="$$(gofmt -l .)"; \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

# A first run on the bundled sample store (real dsh 0.1.0 logs); no dsh
# needed. Every command is printed exactly as it runs, so it can be copied.
DEMO_STORE := testdata/demo/sessions
demo: build
	@set -e; for cmd in \
	  "list --all" \
	  "stat session-4f1c" \
	  "cat -o text --no-pager session-7a2b"; do \
	  echo "\$$ $(BIN) --store $(DEMO_STORE) $$cmd"; \
	  $(BIN) --store $(DEMO_STORE) $$cmd; \
	  echo; \
	done

# Man pages (section 1) of every command into $(MANDIR); see README.
man:
	$(GO) run -ldflags '$(LDFLAGS)' ./cmd/dshctl man $(MANDIR)

bench:
	$(GO) test -run='^$$' -bench=. -benchmem $(PKGS)

# Runs every fuzz target for FUZZTIME each, one at a time, and prints the
# executions of each (the last progress line of the run). A run that Go
# 1.26's fuzz coordinator ends with a bare "context deadline exceeded" at
# the end of FUZZTIME, writing no failing input, is its known race
# (go.dev/issue/75804, fixed in Go 1.27), not a finding.
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //'); do \
	    t=$(FUZZTIME); case " $(FUZZSLOW) " in *" $$f "*) t=$(FUZZTIMESLOW);; esac; \
	    echo "fuzz $$pkg $$f ($$t)"; \
	    out=$$(mktemp); \
	    if ! $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$$t -fuzzminimizetime=$(FUZZMINIMIZE) $$pkg >$$out 2>&1; then \
	      if grep -q '^    context deadline exceeded$$' $$out && ! grep -q 'Failing input written' $$out; then \
	        echo "  $$f: ended by Go 1.26's fuzz deadline race (go.dev/issue/75804), no failing input"; \
	      else \
	        cat $$out; rm -f $$out; exit 1; \
	      fi; \
	    fi; \
	    grep '^fuzz: elapsed' $$out | tail -1 | sed "s|^|  $$f: |"; rm -f $$out; \
	  done; \
	done

# Kills writer processes at random points and checks that no acknowledged event is lost.
crash:
	DSHCTL_CRASH_RUNS=$(CRASHRUNS) $(GO) test -count=1 -timeout=60m -run='^TestCrash' -v ./cmd/dshctl/ ./internal/sqlite/

# The race detector on every package but cmd/dshctl, whose scripts run
# dshctl as a process of its own: built with -race, they take well over
# the 10 minutes a test binary gets by default (the catalogue's CPU and
# memory bounds are scaled under -race, raceCPU and raceMem, for whoever
# runs them so: -timeout=60m). -short leaves out the multi-GB stores.
RACEPKGS = $(shell $(GO) list $(PKGS) | grep -v '/cmd/dshctl$$')
race:
	$(GO) test -race -short -count=1 -timeout=30m $(RACEPKGS)

# What CI runs after `make cross` (.ci/run): the full suite, then short fuzz
# runs (without minimisation: 3 s go well past the seeds, 40 s for the
# whole-store targets) and crash loops.
ci: test
	$(MAKE) fuzz FUZZTIME=3s FUZZTIMESLOW=40s
	$(MAKE) crash CRASHRUNS=30

clean:
	rm -rf bin $(MANDIR)
