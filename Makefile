# edgeplane: a Kubernetes operator for edge nodes and their containers.

# Tools and envtest binaries are built from the Go module proxy into this
# cache, outside the repository, once per pinned version.
export EDGEPLANE_CACHE ?= $(HOME)/.cache/edgeplane
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMG ?= edgeplane/manager:$(VERSION)
AGENT_IMG ?= edgeplane/edge-agent:$(VERSION)
# Platforms of the images.
IMAGE_PLATFORMS ?= linux/amd64 linux/arm64
LDFLAGS = -s -w -X github.com/edgeplane/edgeplane/internal/shared/version.version=$(VERSION)
# Edge devices the agent is built for: os/arch[/arm version].
AGENT_PLATFORMS ?= linux/amd64 linux/arm64 linux/arm/7
KUBECTL ?= kubectl

# Setting SHELL to bash allows bash commands to be executed by recipes.
SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-15s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: ## Generate CRD YAML and the manager's ClusterRole from kubebuilder markers.
	hack/generate.sh manifests

.PHONY: generate
generate: ## Generate DeepCopy methods of the API types, then the references of docs/reference (make docs).
	hack/generate.sh objects
	go run ./hack/docs

.PHONY: docs
docs: ## Generate docs/reference from the code: api.md from the API types (crd-ref-docs), facade.md from apiserver/openapi.json, commands.md from the flags of manager, edge-agent and kubectl edge.
	go run ./hack/docs

.PHONY: fmt
fmt: ## Run go fmt against code.
	go fmt $(PACKAGES)

.PHONY: vet
vet: ## Run go vet against code.
	go vet $(PACKAGES)

.PHONY: envtest
envtest: ## Build (once) the kube-apiserver, etcd and kubectl that tests run against.
	hack/envtest-assets.sh

.PHONY: test
test: vet ## Run every test: schema, generated-code drift, controllers, facade, agents on real engines (envtest), with each fuzz test for 3,000 executions beside them at the lowest CPU priority, then a check that no process the run started is left.
	@[[ "$${EDGEPLANE_SKIP_ENGINE:-}" != 1 ]] || echo "EDGEPLANE_SKIP_ENGINE=1: the real-engine suites (test/e2e/engine/...) are skipped"
	TEST_PARALLEL="$(TEST_PARALLEL)" SLOW_SUITES="$(SLOW_SUITES)" TEST_PACKAGES="$(or $(TEST_PACKAGES),$(PACKAGES))" MAKE="$(MAKE)" hack/test.sh

# Every package of the three modules go.work joins: the product (./...)
# and the harnesses (hack/, test/), which ./... does not reach.
PACKAGES = ./... ./hack/... ./test/...

# Test packages run at once; empty: one per core, fewer when memory is
# short (hack/test.sh).
TEST_PARALLEL ?=

# The longest suites start first (go test runs packages in the order
# given, each once): in path order they came last and the run waited on
# them alone.
SLOW_SUITES = ./test/e2e/engine/podman ./controllers ./test/e2e/engine/docker ./test/upgrade ./test/e2e/install ./test/e2e/console ./test/edgechaos ./test/chaos ./test/e2e/hub

.PHONY: stress
stress: ## Run one package's tests N times (5) with one core kept busy, to hunt a flake: make stress PKG=./test/chaos N=5 [RUN=regexp]; each run through hack/testexec, a failed run's output kept; last line: stress: package= runs= passed= failed= logs=
	hack/stress.sh "$(PKG)" "$(or $(N),5)" "$(RUN)"

.PHONY: test-stress
test-stress: ## Run make test with one core kept busy the whole time, as on a contributor's machine that builds something else.
	hack/busy.sh $(MAKE) --no-print-directory test

# go vet ran first, over every package: the test and fuzz builds skip
# their own vet pass (-vet=off): vet's work is done once, not once per
# package again and once per fuzz target.
# Each fuzz test runs from its seed corpus in `go test`; here the fuzzer
# also explores for FUZZTIME: a count of executions by default, since a
# duration can end mid-run as a spurious "context deadline exceeded".
FUZZTIME ?= 3000x
FUZZ_TARGETS = apiserver:FuzzQuery apiserver:FuzzBodies apiserver:FuzzHandlerRefusals apiserver:FuzzContainerJSON internal/shared/paths:FuzzNormalize internal/shared/imageref:FuzzParse

# make fuzz-long: each fuzz target for at least FUZZ_EXECS executions.
FUZZ_EXECS ?= 1000000

.PHONY: fuzz-long
fuzz-long: ## Run each fuzz test for FUZZ_EXECS executions (default 1,000,000) and print the counts (fuzz: target= package= executions=), into docs/figures/fuzz-long.md; a crasher is saved under testdata/fuzz as a seed: commit it.
	@$(FIGURES) --page docs/figures/fuzz-long.md --title "Fuzzing at length" --command "make fuzz-long$(call given,FUZZ_EXECS)" \
		--intro "Each fuzz test run by the fuzzer for $(FUZZ_EXECS) executions or more without a crasher: a row per target." -- \
		hack/fuzz-long.sh $(FUZZ_EXECS) $(FUZZ_TARGETS)

.PHONY: fuzz
fuzz: ## Run each fuzz test for FUZZTIME (default 3000x: executions; or a duration, FUZZTIME=1m).
	@for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} ($${t%%:*}) for $(FUZZTIME)"; \
		go test -vet=off ./$${t%%:*} -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) || exit 1; \
	done

##@ Build

.PHONY: build
build: ## Build the binaries into bin/, stamped with VERSION.
	go build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/...

.PHONY: agent
agent: ## Cross-compile static edge-agent binaries for AGENT_PLATFORMS into bin/ (version VERSION).
	@for p in $(AGENT_PLATFORMS); do \
		IFS=/ read -r os arch arm <<<"$$p"; \
		out=bin/edge-agent-$$os-$$arch$${arm:+v$$arm}; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch GOARM=$$arm go build -trimpath \
			-ldflags "$(LDFLAGS)" -o $$out ./cmd/edge-agent; \
		echo "$$out"; \
	done

.PHONY: image
image: ## Build the manager and edge-agent images (IMG, AGENT_IMG) for IMAGE_PLATFORMS into dist/images, from the Go module proxy alone.
	@for p in $(IMAGE_PLATFORMS); do \
		IFS=/ read -r os arch <<<"$$p"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build -trimpath -ldflags "$(LDFLAGS)" -o bin/image/$$os-$$arch/ ./cmd/manager ./cmd/edge-agent; \
	done
	go run ./hack/image --name $(IMG) --entrypoint /manager --version $(VERSION) --out dist/images \
		$(foreach p,$(IMAGE_PLATFORMS),--binary $(p)=bin/image/$(subst /,-,$(p))/manager)
	go run ./hack/image --name $(AGENT_IMG) --entrypoint /edge-agent --version $(VERSION) --out dist/images \
		$(foreach p,$(IMAGE_PLATFORMS),--binary $(p)=bin/image/$(subst /,-,$(p))/edge-agent)
	@echo "load one: docker load -i dist/images/manager-linux-amd64.tar (or podman load); push all platforms: skopeo copy --all oci:dist/images/manager.oci docker://$(IMG)"

# make release: the registry the release's image is named for (a
# placeholder; the image is $(RELEASE_REGISTRY)/manager:VERSION), and the
# platforms of the kubectl plugin.
RELEASE_REGISTRY ?= registry.example/edgeplane
PLUGIN_PLATFORMS ?= linux/amd64 linux/arm64

.PHONY: release
release: ## Cut release VERSION (vX.Y.Z, required; CHANGELOG.md needs its section) into dist/release/VERSION: the manager image for IMAGE_PLATFORMS (RELEASE_REGISTRY/manager:VERSION, per-platform archives and an OCI archive), edge-agent for AGENT_PLATFORMS, kubectl-edge for PLUGIN_PLATFORMS, install.yaml, the packaged chart, an SBOM per artifact, the release notes and SHA256SUMS; last lines: sha256 bytes artifact.
	RELEASE_REGISTRY="$(RELEASE_REGISTRY)" IMAGE_PLATFORMS="$(IMAGE_PLATFORMS)" AGENT_PLATFORMS="$(AGENT_PLATFORMS)" PLUGIN_PLATFORMS="$(PLUGIN_PLATFORMS)" \
		hack/release.sh "$(if $(filter-out file default undefined,$(origin VERSION)),$(VERSION))"

.PHONY: run
run: ## Run the manager against the cluster of the current kubeconfig.
	go run ./cmd/manager

.PHONY: dev
dev: ## Bring up the whole system on this machine: control plane, manager with the facade, simulated nodes, samples.
	hack/dev.sh

##@ Deployment

.PHONY: install
install: ## Install the CRDs into the cluster of the current kubeconfig.
	$(KUBECTL) kustomize config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: ## Remove the CRDs; refused while any EdgeNode, EdgeService, DeployRecord or ProvisionTemplate exists.
	@left="$$($(KUBECTL) get edgenodes,edgeservices,deployrecords,provisiontemplates -A -o name 2>/dev/null | wc -l)"; \
	if [[ "$$left" -gt 0 ]]; then \
		echo "uninstall: $$left edgeplane objects remain; removing the CRDs would delete them all. Delete them first, while the manager runs (it releases their finalizers): kubectl get edge -A"; \
		exit 1; \
	fi
	$(KUBECTL) kustomize config/crd | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: build-installer
build-installer: ## Write the release bundle dist/install.yaml: CRDs, Lease namespace, RBAC, the manager (image IMG), Services, policies.
	hack/build-installer.sh "$(IMG)" dist/install.yaml

.PHONY: deploy
deploy: ## Deploy CRDs, the Lease namespace, RBAC and the manager (image IMG) to the cluster of the current kubeconfig.
	$(KUBECTL) kustomize config/default | sed 's#image: edgeplane/manager:latest#image: $(IMG)#' | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: ## Remove the manager, the edge hub and their RBAC; never the CRDs (your objects) nor the Lease namespace (your agents' identities). The hub's CA goes with its namespace: devices join again after a new deploy unless Secret edgeplane-hub-ca is kept and applied first.
	$(KUBECTL) kustomize config/hub | $(KUBECTL) delete --ignore-not-found -f -
	$(KUBECTL) kustomize config/system | $(KUBECTL) delete --ignore-not-found -f -
	$(KUBECTL) kustomize config/namespaced-rbac | $(KUBECTL) delete --ignore-not-found -f -

##@ Benchmarks

# Every measurement below writes its figures into a page of docs/figures
# (the docs link to it): hack/figures runs the command, passes its output
# through and makes each line of figures it prints (prefix: key=value ...,
# or a Go benchmark's result) a row of the page's tables, under the command
# with the parameters given, the date, the commit and the machine. A run
# that fails or prints no figure writes no page.
FIGURES = go run ./hack/figures
# given is " NAME=value" for each variable named in $(1) that was set on
# the command line or in the environment: a page's --command.
given = $(if $(call given_words,$(1)), $(call given_words,$(1)))
given_words = $(strip $(foreach v,$(1),$(if $(and $($(v)),$(filter-out undefined default file automatic,$(origin $(v)))),$(v)=$($(v)))))
comma := ,

.PHONY: scale
NODES ?= 1000
SERVICES ?= 5000
CONCURRENCY ?= 4
# make scale's page of figures: scale-NODES, then -wide with PROFILE=wide,
# -rest with REST_ONLY=1, -direct with HUB=0, -process with BALANCER=process.
SCALE_PAGE = scale-$(NODES)$(if $(filter wide,$(PROFILE)),-wide)$(if $(REST_ONLY),-rest)$(if $(filter 0 false,$(HUB)),-direct)$(if $(filter process,$(BALANCER)),-process)
scale: build ## The scale run: NODES simulated nodes (1,000) and SERVICES dynamic services x 2 (5,000), the manager's --concurrency CONCURRENCY (4, its default), CPU profiles into PROFILES if set, a read replica's facade loaded too with REPLICA=1, the API server stopped for OUTAGE (e.g. 60s) after convergence with the writes of the minute after; CONSOLE=1: the web console's first complete overview in headless Chromium, the requests/s and bytes/s of one open tab and the node list's size (console: first_overview_s= tab_requests_per_s= tab_kb_per_s= window_s= node_list_kb=); AGENT_WATCHES=false: without a watch per node; PROFILE=wide: 5 services of one instance per node, then one spec change timed all at once and one in waves, RollingUpdate maxUnavailable 25% (wide: change_s= rolling_change_s= largest_service_kib=); CONVERGE_WITHIN (e.g. 15m): figures of how far it got by then (converged: services= done= after_s=); WRITE_COST=1: before the services, kube-apiserver's CPU per spec change of a 2-instance service with every node watching (writecost: ...); TIMEOUT (20m): the whole run, registration included (give 5,000 nodes 45m); last line: scale: nodes= instances= success_s= writes_per_instance= (from apiserver_request_total, Leases excluded) manager_rss_mib= facade_p99_ms= apiserver_cpu_s= apiserver_cpu_ms_per_instance=; HUB=0: every node straight to the API server with Leases (direct mode) instead of through two edge hub replicas behind a loopback balancer (the default: join: joins= join_s= joins_per_s= writes_per_join=, rest: ... rest_writes_per_s= rest_writes_per_node_min= apiserver_watches= fleet_watches= hub_rss_mib= hub_cpu_ms_per_node_s=); KILL_HUB=1: at rest, kill -9 one hub replica (hub_kill: nodes= moved= reconnected_s= declared_offline=) before the services; REST_ONLY=1: stop after the figures at rest (REST_WINDOW, 60s); BALANCER=kernel (the default: DNAT rules in the nat table, as kube-proxy does for a Service; needs root and iptables, else a process) or process (a loopback proxy, in processes of its own sharing one port past 8,000 nodes); DEVICES_NICE (1-19): the simulated devices and the balancer at that CPU priority; STAGES=1: kube-apiserver's CPU from the first create until every instance is successful, by the stage of the work (apiserver_stages: system= cpu_s= gc_pct= admission_pct= managed_fields_pct= validation_pct= decode_pct= encode_pct= etcd_pct= watch_pct= filters_pct= network_pct= other_pct=; not with PROFILES); the figures into docs/figures/scale-NODES.md, -wide, -rest, -direct, -process appended with PROFILE=wide, REST_ONLY=1, HUB=0, BALANCER=process (scale-5000-rest.md)
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(FIGURES) --page docs/figures/$(SCALE_PAGE).md \
		--title "The scale run at $(NODES) nodes$(if $(filter wide,$(PROFILE)),$(comma) wide)$(if $(REST_ONLY),$(comma) at rest only)$(if $(filter 0 false,$(HUB)),$(comma) direct mode)" \
		--command "make scale$(call given,NODES SERVICES CONCURRENCY PROFILES REPLICA OUTAGE CONSOLE AGENT_WATCHES PROFILE CONVERGE_WITHIN TIMEOUT WRITE_COST HUB KILL_HUB REST_ONLY REST_WINDOW DEVICES_NICE BALANCER STAGES)" \
		--intro "$(NODES) simulated nodes $(if $(filter 0 false,$(HUB)),straight to kube-apiserver with Leases (direct mode),through two edge hub replicas)$(if $(REST_ONLY),$(comma) at rest only,$(comma) then $(if $(filter wide,$(PROFILE)),5 services of one instance per node,$(SERVICES) dynamic services of 2 instances)). A table per kind of line the run printed: join: the joins through the hub, online: every node brought online, rest: at rest, projection: those figures projected to 100$(comma)000 nodes (memory from its growth per node over the run's baseline; CPU at rest and the time online in proportion to the nodes$(comma) an upper bound where a cost is fixed), scale: the services until every instance ran, curve: the point of make scale-curve, and those its parameters add." -- \
		go run ./test/perf/scale --nodes $(NODES) --services $(SERVICES) --concurrency $(CONCURRENCY) $(if $(PROFILES),--profiles $(PROFILES)) $(if $(REPLICA),--replica) $(if $(OUTAGE),--outage $(OUTAGE)) $(if $(CONSOLE),--console) $(if $(AGENT_WATCHES),--agent-watches=$(AGENT_WATCHES)) $(if $(PROFILE),--profile $(PROFILE)) $(if $(CONVERGE_WITHIN),--converge-within $(CONVERGE_WITHIN)) $(if $(TIMEOUT),--timeout $(TIMEOUT)) $(if $(WRITE_COST),--write-cost) $(if $(HUB),--hub=$(HUB)) $(if $(KILL_HUB),--kill-hub) $(if $(REST_ONLY),--rest-only) $(if $(REST_WINDOW),--rest-window $(REST_WINDOW)) $(if $(DEVICES_NICE),--devices-nice $(DEVICES_NICE)) $(if $(BALANCER),--balancer $(BALANCER)) $(if $(STAGES),--stages)

.PHONY: chaos
chaos: build ## The chaos run: 50 services, 1,000 spec changes, each leading manager killed once it led 6 s; prints duplicates, missing versions and convergence time (chaos: ...), into docs/figures/chaos.md.
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(FIGURES) --page docs/figures/chaos.md --title "The chaos run" --command "make chaos" \
		--intro "50 services, 1,000 spec changes, each leading manager killed once it led 6 s: kills, versions recorded twice or missing, and the time to converge after the last kill." -- \
		go run ./hack/chaos --services 50 --changes 1000

.PHONY: chaos-edge
chaos-edge: build ## The edge chaos run: the manager, a real agent on Podman (ENGINE=docker for Docker Engine) and 20 simulated nodes; 3 minutes of changes at 2/s rolled out in waves (a canary, then a node at a time, autoRollback), 5 of them to an image that fails on simulated nodes, every replacement pulling its image (2 s on simulated nodes, from a registry on the real one), while the real agent's link is cut 10 times, its engine restarted 5 times, the agent SIGKILLed 10 times and its registry link stalled 5 times, and one of the two edge hub replicas every device joined SIGKILLed 5 times; last line: edge-chaos: cuts= engine_restarts= agent_kills= pull_stalls= hub_kills= bad_images= rollbacks= duplicates= orphans= lost_changes= offline= converge_s=; into docs/figures/chaos-edge.md (chaos-edge-docker.md with ENGINE=docker)
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(FIGURES) --page docs/figures/chaos-edge$(if $(filter docker,$(ENGINE)),-docker).md \
		--title "The edge chaos run$(if $(filter docker,$(ENGINE)), on Docker Engine)" --command "make chaos-edge$(call given,ENGINE)" \
		--intro "The manager, a real agent on $(if $(filter docker,$(ENGINE)),Docker Engine,Podman) and 20 simulated nodes through two edge hub replicas, 3 minutes of changes rolled out in waves while the real agent's link is cut, its engine restarted, the agent and a hub replica SIGKILLed and its registry link stalled: faults injected, changes recorded twice, orphans, lost changes and the time to converge." -- \
		go run ./hack/edgechaos --engine $(or $(ENGINE),podman)

.PHONY: upgrade
upgrade: ## The upgrade run: the previous release (hack/releases.tsv, built from its commit) with two managers, two edge hub replicas, 20 simulated nodes, 5 more that keep its agent and a real node on Podman (ENGINE=docker for Docker Engine, ENGINE=none for none), upgraded as docs/install.md says (CRDs, managers, hubs, agents) while a service rolls out in waves (each simulated wave pulls 10 s) and another changes at every step; last line: upgrade: from= to= nodes= real_node= services= changes= steps= steps_in_flight= lost= duplicates= restarts= offline= real_mismatches= skew_nodes= upgrade_s= rollout_s= facade_requests= facade_errors= facade_p99_ms=; into docs/figures/upgrade.md
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(FIGURES) --page docs/figures/upgrade.md --title "The upgrade run" --command "make upgrade$(call given,ENGINE)" \
		--intro "The previous release's fleet upgraded to this tree as docs/install.md says, while a rollout moves in waves: versions lost or recorded twice, containers restarted at a revision they already ran, nodes declared offline, the facade's errors and p99 throughout, and how long the upgrade and the rollout took." -- \
		go run ./hack/upgrade --engine $(or $(ENGINE),podman)

.PHONY: ci-time
ci-time: ## Time CI as CI runs it: bash .ci/run on a fresh clone of HEAD with ../shared beside it and CI=true, RUNS times in a row (1); COLD=1 with empty Go module, build and tool caches of its own (the Debian packages stay); BUSY=1 with one core kept busy the whole time; INTERRUPT=S interrupted S seconds in, as Ctrl-C does; after each run the processes it left are counted and killed (left=, any fails it); a line a run: ci: run= caches= busy= parallel= total_s= vet_s= tests_s= fuzz_s= longest_suite_s= packages= left= (INTERRUPT: ci: run= caches= busy= interrupted_after_s= stopped_s= left=); into docs/figures/ci-warm.md, ci-cold.md, ci-busy.md or ci-interrupt.md
	$(FIGURES) --page docs/figures/ci-$(CI_PAGE).md --title "How long CI takes, $(CI_PAGE)" --command "make ci-time$(call given,RUNS COLD BUSY INTERRUPT)" \
		--intro "bash .ci/run (make test) on a fresh clone of the commit below$(comma) as CI runs it$(comma) $(RUNS_WORDS)$(comma) $(if $(COLD),with empty Go module$(comma) build and tool caches (kube-apiserver$(comma) etcd and every tool built again from the Go module proxy),with the caches of the machine's earlier runs)$(if $(BUSY),$(comma) with one core kept busy by another process the whole time). $(if $(INTERRUPT),Each run was interrupted $(INTERRUPT) s in as Ctrl-C does (SIGINT to its process group): stopped_s is how long it took to stop$(comma) left the processes it started still alive after it.,The steps: go vet (vet_s)$(comma) the test packages parallel at once (tests_s; longest_suite_s is the slowest package's own time)$(comma) then what the fuzz step$(comma) run beside them at the lowest CPU priority$(comma) took after them (fuzz_s); left is the processes the run started still alive after it.)" -- \
		hack/ci-time.sh

# make ci-time's page and its words for RUNS.
CI_PAGE = $(if $(INTERRUPT),interrupt,$(if $(COLD),cold,$(if $(BUSY),busy,warm)))
RUNS_WORDS = $(if $(filter-out 1,$(or $(RUNS),1)),$(RUNS) runs in a row$(comma) each on a clone of its own,one run)

.PHONY: soak
soak: build ## The soak run (docs/soak.md): for DURATION (60m), NODES simulated nodes (200) and a tenth more cut off and back every 2 minutes (SIGSTOP of their agent or their link cut, 15 s), and one real-engine node (a real edge-agent on Podman, ENGINE=docker for Docker Engine, ENGINE=none for none; an engine that cannot be started is said and left out) whose 2 static services change every 2 minutes each, through two edge hub replicas; two managers with leader election and the facade, the leader SIGKILLed every 5 minutes, a read replica, kube-apiserver stopped 30 s every 20 minutes; one churn action a second on NODES/2 services (edits, versions and scaling through the facade, rollouts in waves paused and resumed, rollbacks, failing images rolled back by the manager), a service with its folder and template created through the facade every 30 s and deleted past 4; facade readers at 20 requests/s and the console's polling every 5 s; every minute each process's RSS, goroutines and open files, the count of each kind of object, of the real engine's containers and etcd's database in use; a table, samples.csv and a plot per series into OUT (dist/soak), and, for the hour's run (DURATION=60m), the page docs/figures/soak.md with its plots; last line: soak: duration_m= nodes= changes= failovers= cuts= apiserver_pauses= ... records_over_limit= unconverged= missing= duplicates= p99_first_ms= p99_last_ms= judged= grown= real_node= real_mismatches=; exits non-zero when a series' fitted line grows after the first 10 minutes beyond its tolerance (a run of 12 minutes or less judges none: judged=0), a version is missing or recorded twice, a service keeps more records than its revisionHistoryLimit or does not settle, the readers' p99 in the last 10 minutes is over twice the first's, or the real engine holds other containers at the end than one per instance of its node at its service's current spec
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" go run ./hack/soak --duration $(DURATION) --nodes $(SOAK_NODES) --out $(SOAK_OUT) --engine $(or $(ENGINE),podman) $(if $(filter 60m,$(DURATION)),--figures docs/figures/soak.md)

# make soak's run time. NODES and OUT are make scale's and make
# scale-curve's too, with defaults of theirs: given on the command line or
# in the environment they are soak's, else soak's own defaults hold.
DURATION ?= 60m
SOAK_NODES = $(if $(filter file,$(origin NODES)),200,$(NODES))
SOAK_OUT = $(if $(filter file,$(origin OUT)),dist/soak,$(OUT))

.PHONY: scale-curve
scale-curve: build ## The scale run at each of SIZES nodes (250,500,1000,2000,5000), 5 services x 2 per node; one line per size: curve: nodes= online_s= instances= success_s= rest_writes_per_s= apiserver_rss_mib= apiserver_cpu_ms_per_node_s= manager_rss_mib= facade_p99_ms= apiserver_ms_per_change= (kube-apiserver CPU per spec change of a 2-instance service, with every node watching: --write-cost); CSV, SVG plots and logs into OUT (dist/scale-curve; sizes measured before and not run again are kept); a size not converged within CONVERGE_WITHIN (30m) gets success_s=NaN and keeps its other figures; through two edge hub replicas unless HUB=0 (direct mode), with hub= rest_writes_per_node_min= apiserver_watches= hub_rss_mib= hub_cpu_ms_per_node_s= join_s= joins_per_s= writes_per_join= (NaN in direct mode); direct and hub points are kept apart and plotted side by side; the run's lines into docs/figures/scale-curve.md
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(FIGURES) --page docs/figures/scale-curve.md --title "The scale curve" \
		--command "make scale-curve$(call given,SIZES OUT CONVERGE_WITHIN HUB)" \
		--intro "The scale run at each of $(SIZES) nodes, 5 services of 2 instances per node, $(if $(filter 0 false,$(HUB)),straight to kube-apiserver (direct mode),through two edge hub replicas): a table per kind of line the runs printed (curve: each size's summary; join:, online:, rest:, projection:, writecost:, converged:, scale: the lines of each size's run, as make scale prints them), a row per size in the order of SIZES (NaN: not measured in this mode, or not converged within the time given). The CSV and plots of every size measured are in $(OUT)." -- \
		go run ./test/perf/scalecurve --sizes $(SIZES) --out $(OUT) $(if $(CONVERGE_WITHIN),--converge-within $(CONVERGE_WITHIN)) $(if $(HUB),--hub=$(HUB))

# make scale-curve's node counts and output directory.
SIZES ?= 250,500,1000,2000,5000
OUT ?= dist/scale-curve

.PHONY: gateway-sim
gateway-sim: ## Replay a fleet's heartbeat trace through a heartbeat gateway (internal/hub/heartbeat) and compare its API writes with Lease renewals, for 1,000 to 100,000 nodes; a line per size: gateway: nodes= hours= lease_writes_per_s= gateway_writes_per_s= reduction= detect_p50_s= detect_max_s=; into docs/figures/gateway-sim.md
	$(FIGURES) --page docs/figures/gateway-sim.md --title "The heartbeat gateway, simulated" --command "make gateway-sim" \
		--intro "A fleet's heartbeat trace replayed through a heartbeat gateway (internal/hub/heartbeat), for 1,000 to 100,000 nodes: its API writes against those of Lease renewals, and how long it takes to detect a node gone." -- \
		go run ./test/perf/gatewaysim

.PHONY: scale-peer
scale-peer: build ## The same workload on edgeplane (the scale run, through the hub unless HUB=0) and on plain Kubernetes (kube-controller-manager, kube-scheduler and kwok nodes, built by hack/peer-assets.sh at the version of kube-apiserver) on the same kube-apiserver and etcd with the same flags, one after the other, PAIRS pairs (3) at NODES nodes (1,000; 5 services or Deployments x 2 per node); lines: scale: ... (edgeplane's); peer: system=kubernetes nodes= instances= success_s= apiserver_cpu_s= apiserver_cpu_ms_per_instance= writes_per_instance= writes_per_instance_with_leases= rest_apiserver_cpu_ms_per_node_s=; after each pair compare: pair= nodes= edgeplane_success_s= peer_success_s= time_ratio= edgeplane_apiserver_cpu_ms_per_instance= peer_apiserver_cpu_ms_per_instance= cpu_ratio= edgeplane_writes_per_instance= peer_writes_per_instance= writes_ratio= (edgeplane over Kubernetes); at the end summary: pairs= nodes= time_ratio_median= _min= _max= cpu_ratio_... writes_ratio_...; each side's kube-apiserver CPU during convergence by the stage of the work (apiserver_stages: system= ...); the pairs' figures into docs/figures/scale-peer-NODES.md (when both sides ran); ONLY=peer or ONLY=edgeplane runs one side; edgeplane's side runs without the facade's readers (the peer has none); TIMEOUT (40m) per run; CBOR=1 runs both sides with kube-apiserver's alpha CBORServingAndStorage gate (KEP-4222; custom resources stored as CBOR, clients in JSON), its page docs/figures/scale-peer-NODES-cbor.md; PEER_WITHIN stops the peer's run that long after its first create, its time then projected at the rate it reached and its figures per instance running by then (the page says so); logs into dist/scale-peer
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" PEER_ASSETS="$$(hack/peer-assets.sh)" go run ./test/perf/scalepeer --nodes $(or $(NODES),1000) $(if $(PAIRS),--pairs $(PAIRS)) $(if $(HUB),--hub=$(HUB)) $(if $(ONLY),--only $(ONLY)) $(if $(TIMEOUT),--timeout $(TIMEOUT)) $(if $(PEER_WITHIN),--peer-within $(PEER_WITHIN)) $(if $(CBOR),--cbor) --figures docs/figures/scale-peer-$(or $(NODES),1000)$(if $(CBOR),-cbor).md

.PHONY: channel-cost
channel-cost: ## The server's cost per device heartbeat for NODES devices (1,000), each on its own mutual-TLS connection with its own certificate, beating every 10 s, two ways one after the other: HTTP/2 Lease renewals as through the edge hub (http), and a gRPC bidirectional stream per device (grpc); the server in its own process, its CPU measured over 60 s once every device has beaten; a line per way: channel: way= nodes= beats= server_cpu_ms_per_beat= server_cpu_ms_per_node_s= server_rss_mib= server_kib_per_node= client_cpu_ms_per_beat= connect_s= errors= (errors must be 0); into docs/figures/channel-cost.md
	$(FIGURES) --page docs/figures/channel-cost.md --title "The cost of a heartbeat channel" --command "make channel-cost$(call given,NODES)" \
		--intro "The server's cost per device heartbeat for $(NODES) devices, each on its own mutual-TLS connection beating every 10 s, two ways: HTTP/2 Lease renewals as through the edge hub (http), and a gRPC bidirectional stream per device (grpc)." -- \
		go run ./test/perf/channelcost $(if $(NODES),--nodes $(NODES))

.PHONY: watch-cost
watch-cost: ## kube-apiserver's CPU per write with WATCHERS agents watching (250,1000,5000), two ways: each agent's watch of the EdgeServices labelled for its node, and of one object by name; a line per size and way: watchcost: way= watchers= writes= delivered= apiserver_cpu_ms_per_write=; into docs/figures/watch-cost.md
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(FIGURES) --page docs/figures/watch-cost.md --title "The cost of the agents' watches" --command "make watch-cost$(call given,WATCHERS)" \
		--intro "kube-apiserver's CPU per write with $(WATCHERS) agents watching, two ways: each agent's watch of the EdgeServices labelled for its node, and of one object by name." -- \
		go run ./test/perf/watchcost --watchers $(WATCHERS)

WATCHERS ?= 250,1000,5000

.PHONY: report-cost
report-cost: ## kube-apiserver's CPU per agent report (a node's status write) for CONTAINERS containers on the node (6,50), written as the agent writes it (a server-side apply) and, for comparison, as a JSON merge patch and as the agent writes it to a CRD whose container items have no schema (schemaless: what that schema costs); a line per size and way: reportcost: way= containers= reports= apiserver_cpu_ms_per_report= object_bytes= managed_fields_bytes=; into docs/figures/report-cost.md
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(FIGURES) --page docs/figures/report-cost.md --title "The cost of an agent's report" --command "make report-cost$(call given,CONTAINERS)" \
		--intro "kube-apiserver's CPU per agent report (a node's status write) for $(CONTAINERS) containers on the node, written as the agent writes it (a server-side apply) and, for comparison, as a JSON merge patch (merge) and as an apply to a CRD whose container items have no schema (schemaless)." -- \
		bash -ec "go run ./test/perf/reportcost --containers $(CONTAINERS) --way apply; go run ./test/perf/reportcost --containers $(CONTAINERS) --way merge; go run ./test/perf/reportcost --containers $(CONTAINERS) --way schemaless"

CONTAINERS ?= 6,50

.PHONY: bench-aggregated
bench-aggregated: build ## The facade both ways in, side by side on one kube-apiserver configured for aggregation with NODES EdgeNodes (1,000): direct, through its APIService, and a trivial aggregated backend; 32 connections on the node list (pageSize 10); last line: aggbench: nodes= conns= direct_rps= direct_p99_ms= aggregated_rps= aggregated_p99_ms= trivial_rps= trivial_p99_ms= aggregated_vs_trivial=; into docs/figures/bench-aggregated.md
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(FIGURES) --page docs/figures/bench-aggregated.md --title "The facade both ways in" --command "make bench-aggregated$(call given,NODES)" \
		--intro "The facade side by side on one kube-apiserver configured for aggregation with $(or $(NODES),1000) EdgeNodes: direct, through its APIService, and a trivial aggregated backend; 32 connections on the node list (pageSize 10)." -- \
		go run ./test/perf/aggbench --nodes $(or $(NODES),1000)

.PHONY: outage
outage: ## The API server stopped (SIGSTOP) for 60 s under the manager and facade: reads answer from the cache, writes 503 within 4 s, no growth, convergence after (outage: ...), into docs/figures/outage.md.
	EDGEPLANE_OUTAGE=60s KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(FIGURES) --page docs/figures/outage.md --title "The API server stopped" --command "make outage" \
		--intro "kube-apiserver stopped (SIGSTOP) for 60 s under the manager and the facade: the reads the facade answered from its cache and their latency, the writes it answered 503, its goroutines and heap before, a third in and at the end, and the time to converge once the API server resumed." -- \
		go test ./test/e2e/outage -count=1 -v -run TestAPIServerOutage

.PHONY: slow-pull
slow-pull: ## The real-engine pull spec with a SLOW_PULL (2m) pull instead of make test's 20 s, on Podman and Docker Engine side by side: the node stays online, another service runs, the progress shows.
	EDGEPLANE_SLOW_PULL=$(SLOW_PULL) KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" go test -vet=off ./test/e2e/engine/... -count=1 -v -ginkgo.focus 'pull slower' -ginkgo.v -timeout 30m

SLOW_PULL ?= 2m

.PHONY: bench-agent
bench-agent: build ## The agent on Podman and Docker Engine next to the simulator: spec change to running (p50, max), RSS and CPU with 20 containers, into docs/figures/bench-agent.md.
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(FIGURES) --page docs/figures/bench-agent.md --title "The agent on real engines" --command "make bench-agent" \
		--intro "The agent on Podman and Docker Engine next to the simulator: a spec change to running (p50, p90, max of 20), 20 images pulled at once with one pull stalled, and the first engine's agent's RSS and CPU with 20 containers." -- \
		go run ./test/perf/agentbench --changes 20 --containers 20

.PHONY: bench
bench: ## Run the benchmarks on envtest and print their figures, into docs/figures/bench.md.
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(FIGURES) --page docs/figures/bench.md --title "Benchmarks" --command "make bench" \
		--intro "The benchmarks of ./controllers/... (3 iterations each) and ./apiserver (2 s each) on envtest: a table per package, a row per benchmark, a column per unit." -- \
		bash -ec "go test ./controllers/... -run '^\$$' -bench . -benchtime 3x; go test ./apiserver -run '^\$$' -bench . -benchtime 2s"
