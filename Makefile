# physd — build, test, benchmark, reproduce the paper.
#
#   make run     install what is missing, build, and run the daemon on its
#                built-in default (embedded NATS, synthetic pendulum camera),
#                printing certified estimates; RUN_FOR=0 runs until Ctrl-C
#   make test    install what is missing, vet, run every test, verify the
#                systemd unit, cross-compile for linux/arm64 and run the
#                numerical core's tests there (under qemu)
#   make install / uninstall   the binary, the systemd unit and /etc/physd
#   make bench   speed and memory figures (cold start to a certified estimate)
#   make chaos   fault injection with real processes: nats-server killed 60 s
#                twice and an RTSP server killed while four cameras stream,
#                physd SIGKILLed mid-checkpoint 10 times; prints its figures
#   make soak    physd with four cameras for SOAK (30m; SOAK=24h for a day):
#                RSS and goroutines must stay flat; prints its figures
#   make fuzz    every fuzz target for FUZZTIME each (5m)
#   make paper   regenerate docs/paper-results.md (every table of Sec. 5 and the appendix)
#                and draw each cell to out/paper-plots (PLOT_FORMAT=png for PNG)
#   make real    run physd estimate on the real-footage dev set (../shared/realvid) and write docs/real-results.md
#                (and a figure per run to docs/real-plots); REAL_ARGS='-only NAME' runs a subset
#   make lint    gofmt, go vet, staticcheck
#   make deb     Debian 12 / Raspberry Pi OS packages out/deb/physd_<version>_{amd64,arm64}.deb
#                (DEB_ARCHS=arm64 for one); make deb-test installs the arm64 one in an
#                arm64 Debian 12 root under qemu and runs it (docs/packaging.md)

GO        ?= go
BIN       := bin/physd
PKGS      := ./...
STATICCHECK_VERSION := v0.6.1
# Debian packages physd needs to build (cgo + OpenCV 4.6) and to encode video.
APT_PKGS  := libopencv-dev ffmpeg pkg-config g++ gcc systemd
# What the tests add: Janus (the media server of the WHEP test), Chromium
# (the browser of the WHIP test), and npm to install the WHEP test's
# janus-whep-server (its native module builds with make, g++ and python3).
# qemu-user-static runs the numerical core's tests as linux/arm64 (the
# boards physd is for) on an amd64 machine.
TEST_APT_PKGS := janus chromium make python3 qemu-user-static mosquitto-clients
WHEP_NODE := internal/whepserver/node

RUN_FOR   ?= 60s
PREFIX    ?= /usr/local
DESTDIR   ?=
UNITDIR   ?= /etc/systemd/system

.PHONY: all deps test-deps build run test verify-unit lean-check cross test-arm64 bench paper real subpixel modes ambient lint install uninstall clean chaos soak fuzz deb deb-test

all: build

# deps installs the Debian packages that are missing (root or sudo needed).
deps:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	@$(GO) mod download

# test-deps adds what only the tests need (see TEST_APT_PKGS) and the WHEP
# test's node modules, pinned by package-lock.json.
test-deps: deps
	@missing=""; for p in $(TEST_APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	command -v npm >/dev/null || missing="$$missing nodejs npm"; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	@if [ ! -f $(WHEP_NODE)/node_modules/.package-lock.json ] || [ $(WHEP_NODE)/package-lock.json -nt $(WHEP_NODE)/node_modules/.package-lock.json ]; then \
		echo "npm ci in $(WHEP_NODE)"; \
		nd=""; [ -f /usr/include/node/node.h ] && nd=/usr; \
		cd $(WHEP_NODE) && npm_config_nodedir=$${npm_config_nodedir:-$$nd} npm ci --no-audit --no-fund --loglevel=error; \
	fi

# build links OpenCV's core and imgproc only (packaging/leanbuild.sh says
# why); a plain `go build ./cmd/physd` works too, with all of OpenCV linked.
build: deps
	GO=$(GO) packaging/leanbuild.sh -o $(BIN) ./cmd/physd

# run: the daemon on the built-in default — embedded NATS on 127.0.0.1:4222
# and one synthetic underdamped pendulum camera (γ1 = 0.08, γ0 = 4.0016,
# 20 fps) — printing each certified estimate, for RUN_FOR (0: until Ctrl-C).
run: build
	./$(BIN) run --state-dir out/state --for $(RUN_FOR)

# test runs the chaos tests on their own after the rest (their pace
# comparisons want the machine to themselves), in their short form, and
# every fuzz target briefly.
# The fleet tests (fleet.TestFleetOutage: a 3-node hub cluster stopped for
# 60 s and three boards, real processes, about 2 min; fleet.TestFleetAccounts:
# the hub with accounts, a hostile board, a revocation and two of three hub
# nodes down for 60 s, about 2 min) run with the rest.
test: test-deps
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -timeout 20m $$($(GO) list $(PKGS) | grep -v /internal/chaos)
	$(GO) test -count=1 -timeout 10m ./internal/chaos
	$(GO) test -race -count=1 -timeout 20m ./daemon/...
	$(MAKE) --no-print-directory fuzz FUZZTIME=8s FUZZMIN=1s
	$(MAKE) --no-print-directory verify-unit lean-check cross test-arm64

# lean-check: the binary `make build` makes starts without OpenCV's videoio
# and still reads through it when it must: a rotated MP4 (display matrix),
# which physd leaves to OpenCV, decoded to the end.
lean-check: build
	@if readelf -d $(BIN) | grep -q 'NEEDED.*opencv_videoio'; then echo "lean-check: $(BIN) links libopencv_videoio at start"; exit 1; fi
	@tmp=$$(mktemp -d); \
	ffmpeg -loglevel error -f lavfi -i testsrc=size=96x64:rate=20:duration=2 -c:v libx264 -pix_fmt yuv420p -display_rotation 90 $$tmp/rotated.mp4 2>/dev/null || \
	ffmpeg -loglevel error -f lavfi -i testsrc=size=96x64:rate=20:duration=2 -c:v libx264 -pix_fmt yuv420p -metadata:s:v rotate=90 $$tmp/rotated.mp4; \
	out=$$(./$(BIN) estimate --json $$tmp/rotated.mp4 2>&1); rc=$$?; rm -rf $$tmp; \
	frames=$$(echo "$$out" | sed -n 's/^ *"frames": \([0-9]*\),*$$/\1/p' | head -1); \
	if [ "$$frames" != 40 ]; then echo "$$out" | tail -5; echo "lean-check: the rotated clip read $${frames:-no} frames (exit $$rc), want 40"; exit 1; fi; \
	echo "lean-check: $(BIN) starts without libopencv_videoio and reads a rotated MP4 through it (40 frames)"

# chaos: the long fault-injection run (see internal/chaos).
CHAOS_ARGS ?= -chaos.outage 60s -chaos.outages 2 -chaos.rtsp-down 10s -chaos.kills 10
chaos: deps
	$(GO) test -count=1 -v -timeout 30m -run 'TestOutages|TestKillMidCheckpoint' ./internal/chaos -args $(CHAOS_ARGS)

# soak: physd with four synthetic cameras for SOAK (see internal/soak).
SOAK ?= 30m
soak: deps
	$(GO) test -count=1 -v -timeout 0 -run TestSoak ./internal/soak -args -soak.duration $(SOAK)

# fuzz: every fuzz target (package:Target) for FUZZTIME each; a crasher
# is written to the package's testdata/fuzz and fails the run.
FUZZTIME ?= 5m
FUZZMIN  ?= 10s
FUZZ_TARGETS := ./config:FuzzParse ./daemon:FuzzWHIPRequest ./wire:FuzzDecodeEstimate \
	./wire:FuzzEstimateRoundTrip ./daemon/outbox:FuzzDecodeRecord ./stream:FuzzVideoDecoder \
	./stream:FuzzPreprocess ./estimator:FuzzFitWindow ./estimator/nn:FuzzLoadParams \
	./tracker:FuzzFollow
#
# Go 1.26's fuzz coordinator can report "context deadline exceeded" when
# -fuzztime runs out while a worker is mid-input (go.dev/issue/75804, fixed
# in Go 1.27), with no failing input. A run that fails only that way and
# writes no new input to testdata/fuzz is reported and not counted as a
# failure; every other failure is.
fuzz: deps
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "fuzz $$fn ($$pkg) for $(FUZZTIME)"; \
		before=$$(ls $$pkg/testdata/fuzz/$$fn 2>/dev/null | wc -l); \
		out=$$($(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) $$pkg 2>&1); rc=$$?; \
		echo "$$out"; \
		[ $$rc = 0 ] && continue; \
		after=$$(ls $$pkg/testdata/fuzz/$$fn 2>/dev/null | wc -l); \
		fails=$$(echo "$$out" | grep -c -e '^--- FAIL' -e '^    ' ); \
		if [ "$$after" = "$$before" ] && [ "$$fails" = 2 ] && echo "$$out" | grep -qx '    context deadline exceeded'; then \
			echo "fuzz $$fn: only Go 1.26's end-of-fuzztime race (go.dev/issue/75804), no failing input: not a failure"; \
		else exit 1; fi; \
	done

# verify-unit: systemd-analyze verify must print nothing (any warning fails),
# with ExecStart pointed at the binary just built.
verify-unit: build
	@tmp=$$(mktemp -d); sed "s#/usr/local/bin/physd#$(CURDIR)/$(BIN)#" systemd/physd.service > $$tmp/physd.service; \
	out=$$(systemd-analyze verify $$tmp/physd.service 2>&1); rm -rf $$tmp; \
	if [ -n "$$out" ]; then echo "$$out"; echo "systemd-analyze verify: warnings"; exit 1; fi; \
	echo "systemd-analyze verify systemd/physd.service: clean"; \
	systemd-analyze security --offline=yes systemd/physd.service 2>/dev/null | tail -1

# cross: everything but the OpenCV-backed sources builds for linux/arm64
# without cgo (tag nocv); the board builds the full binary natively.
cross:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -tags nocv -o /dev/null ./cmd/physd
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) vet -tags nocv $(PKGS)
	@echo "linux/arm64 (nocv) cross-build: ok"

# test-arm64: the pure-Go packages' tests (estimator, certificate,
# renderer, config, outbox) built for linux/arm64 and run under user-mode
# qemu. arm64 fuses multiply-adds and has no gonum assembly, so float
# results differ in the last bits from amd64; the accuracy and
# certification tests must hold there too. The estimator package alone takes
# about 13 min under qemu here (757 s on 2026-11-26); the timeout catches a hang.
ARM64_PKGS := ./estimator/... ./window ./tracker ./sim ./simcam ./config ./daemon/outbox
test-arm64:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) test -count=1 -tags nocv -timeout 25m -exec qemu-aarch64-static $(ARM64_PKGS)

install: build
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/physd
	install -D -m 0644 systemd/physd.service $(DESTDIR)$(UNITDIR)/physd.service
	sed -i "s#/usr/local/bin/physd#$(PREFIX)/bin/physd#" $(DESTDIR)$(UNITDIR)/physd.service
	install -d -m 0755 $(DESTDIR)/etc/physd
	[ -e $(DESTDIR)/etc/physd/physd.yaml ] || install -m 0644 config/physd.example.yaml $(DESTDIR)/etc/physd/physd.yaml
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then \
		systemctl daemon-reload && echo "installed; start with: systemctl enable --now physd"; fi

uninstall:
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then \
		systemctl disable --now physd 2>/dev/null || true; fi
	rm -f $(DESTDIR)$(PREFIX)/bin/physd $(DESTDIR)$(UNITDIR)/physd.service
	@echo "left /etc/physd and /var/lib/physd in place (remove by hand to purge)"

# BENCH_ARGS selects or tunes rows (go run ./cmd/bench -h), e.g.
# BENCH_ARGS='-real-only -real-scenes certifiable -real-cams 1'.
BENCH_ARGS ?=
bench: build
	$(GO) run ./cmd/bench -physd $(BIN) -realvid $(REALVID) $(BENCH_ARGS)
	$(GO) test -run '^$$' -bench . -benchtime 3x -count 3 ./estimator/ ./window/

# paper also draws each cell's first seed into $(PAPER_PLOTS) ($(PLOT_FORMAT)).
PAPER_PLOTS ?= out/paper-plots
PLOT_FORMAT ?= svg
paper: deps
	$(GO) run ./cmd/paper -out docs/paper-results.md -plots $(PAPER_PLOTS) -plot-format $(PLOT_FORMAT)

# real: every case of $(REALVID)/truth.tsv run by the binary just built,
# with its listed flags and again without --roi, one run at a time (the
# wall times are in the report).
REALVID   ?= ../shared/realvid
REAL_ARGS ?=
real: build
	$(GO) run ./cmd/real -bin $(BIN) -dir $(REALVID) -out docs/real-results.md -plots docs/real-plots $(REAL_ARGS)

# subpixel: issue 44's sweep of sub-pixel free decays and compressed
# video through physd estimate (docs/subpixel-results.md).
subpixel: build
	$(GO) run ./cmd/subpixel -bin $(BIN) -out docs/subpixel-results.md $(SUBPIXEL_ARGS)

# modes: issue 46's sweep of structures ringing in several modes (two,
# three, a cable's harmonics, close pairs) as every object kind, lossless
# and at CRF 23, through physd estimate (docs/modes-results.md).
MODES_ARGS ?=
modes: build
	$(GO) run ./cmd/modes -bin $(BIN) -out docs/modes-results.md $(MODES_ARGS)

# ambient: issue 45's sweep of ambient records (modes driven by broadband
# noise, and the forcings that are not a mode) through physd estimate
# --ambient, one clip at a time (docs/ambient-results.md).
AMBIENT_ARGS ?=
ambient: build
	$(GO) run ./cmd/ambient -bin $(BIN) -out docs/ambient-results.md $(AMBIENT_ARGS)

# deb: packaging/deb/build.sh builds each arch of DEB_ARCHS; arm64 is
# cross-compiled on amd64 against an arm64 Debian 12 root (debootstrap,
# cached in out/deb/cache). deb-test: packaging/deb/test.sh. Both need root
# or sudo for that root; neither is part of `make test`.
DEB_ARCHS ?= amd64 arm64
DEB_MIRROR ?= http://deb.debian.org/debian
DEB_SECURITY_MIRROR ?= http://deb.debian.org/debian-security
DEB_APT_PKGS := dpkg-dev $(if $(filter arm64,$(DEB_ARCHS)),debootstrap qemu-user-static gcc-aarch64-linux-gnu g++-aarch64-linux-gnu)
DEB_ENV = GO="$(GO)" DEB_ARCHS="$(DEB_ARCHS)" DEB_MIRROR="$(DEB_MIRROR)" DEB_SECURITY_MIRROR="$(DEB_SECURITY_MIRROR)"
deb: deps
	@missing=""; for p in $(DEB_APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	$(DEB_ENV) sh packaging/deb/build.sh

deb-test: DEB_ARCHS = arm64
deb-test: deb
	$(DEB_ENV) sh packaging/deb/test.sh

lint: deps
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS)

clean:
	rm -rf bin out
