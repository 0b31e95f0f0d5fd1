# physd — build, test, benchmark, reproduce the paper.
#
#   make run     install what is missing, build, and run physd's main job on a
#                built-in synthetic camera, printing a certified estimate
#   make test    install what is missing, vet, and run every test
#   make bench   speed and memory figures (cold start to a certified estimate)
#   make paper   regenerate docs/paper-results.md (every table of Sec. 5 and the appendix)
#   make lint    gofmt, go vet, staticcheck

GO        ?= go
BIN       := bin/physd
PKGS      := ./...
STATICCHECK_VERSION := 2025.1.1
# Debian packages physd needs to build (cgo + OpenCV 4.6) and to encode video.
APT_PKGS  := libopencv-dev ffmpeg pkg-config g++ gcc

.PHONY: all deps build run test bench paper lint clean

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

build: deps
	$(GO) build -o $(BIN) ./cmd/physd

# run: the main job on the built-in default — a synthetic underdamped pendulum
# (γ1 = 0.08, γ0 = 4.0016, 1.5π s, 20 fps) rendered to H.264 and estimated.
run: build
	@mkdir -p out
	./$(BIN) sim --system pendulum --regime underdamped --z0 50 --duration 1.5pi out/pendulum.mp4
	./$(BIN) estimate out/pendulum.mp4

test: deps
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -timeout 20m $(PKGS)

bench: build
	$(GO) run ./cmd/bench -physd $(BIN)
	$(GO) test -run '^$$' -bench . -benchtime 3x -count 3 ./estimator/ ./window/

paper: deps
	$(GO) run ./cmd/paper -out docs/paper-results.md

lint: deps
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS)

clean:
	rm -rf bin out
