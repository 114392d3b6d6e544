/*
Copyright 2026 The edgeplane Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package console_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
	"github.com/edgeplane/edgeplane/internal/test/testenv"
)

// hostile is a string a page would run if it ever took it for HTML.
const hostile = `<img src=x onerror=alert(1)>`

func service(name, image string, nodes []string, cmd ...string) *edgev1alpha1.EdgeService {
	return &edgev1alpha1.EdgeService{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Path: "/plant/line-1",
			Image: edgev1alpha1.ImageSpec{Ref: edgev1alpha1.ImageRef(image)}, Cmd: cmd}, Nodes: nodes},
	}
}

// deployCounts are the contract's instances on nodes by deploy status.
func deployCounts() map[string]int {
	GinkgoHelper()
	q := []string{"pageSize", "-1"}
	for _, n := range sys.List(ctx, "/api/v1/node", "pageSize", "-1").List {
		q = append(q, "nodeIds[]", n["id"].(string))
	}
	out := map[string]int{}
	for _, c := range sys.List(ctx, "/api/v1/container/node", q...).List {
		out[c["deployStatus"].(string)]++
	}
	return out
}

func nodeByName(name string) map[string]any {
	GinkgoHelper()
	for _, n := range sys.List(ctx, "/api/v1/node", "pageSize", "-1").List {
		if n["name"] == name {
			return n
		}
	}
	return nil
}

var _ = Describe("The console", Ordered, func() {
	BeforeAll(func() {
		Eventually(func() int {
			online := 0
			for _, n := range sys.List(ctx, "/api/v1/node", "pageSize", "-1").List {
				if n["status"] == "online" {
					online++
				}
			}
			return online
		}).Should(Equal(4))
		for _, s := range []*edgev1alpha1.EdgeService{
			service("web", "web@1.0#linux", []string{"edge-linux-01", "edge-linux-02"}, "/bin/web", "--title", hostile),
			service("broken", "broken@1#sylixos", []string{"edge-sylixos-03"}),
			service("quiet", "quiet@1#linux", []string{silentNode}),
		} {
			Expect(sys.Client.Create(ctx, s)).To(Succeed())
		}
		Eventually(deployCounts).Should(Equal(map[string]int{"success": 3, "failure": 1}))
	})

	It("shows the fleet overview with the contract's counts", func() {
		open("#/")
		nodes := sys.List(ctx, "/api/v1/node", "pageSize", "-1").List
		running, total := 0, 0
		for _, n := range nodes {
			running += int(n["containerRunning"].(float64))
			total += int(n["containerTotal"].(float64))
		}
		// The page refreshes on its own: the figures settle on the
		// contract's without a reload.
		Eventually(func() string { return text(`a.ring[aria-label^="Nodes online"] .card-figure`) }).Should(Equal(fmt.Sprintf("%d / %d", 4, len(nodes))))
		Eventually(func() string { return text(`a.ring[aria-label^="Containers running"] .card-figure`) }).Should(Equal(fmt.Sprintf("%d / %d", running, total)))
		d := deployCounts()
		Eventually(func() string { return text(`section[aria-label="Instances by deploy status"] .bar-figure`) }).Should(
			Equal(fmt.Sprintf("%d success · %d deploying · %d failure", d["success"], d["deploying"], d["failure"])))
		Expect(eval[int](`document.querySelectorAll('.grid a.cell').length`)).To(Equal(len(nodes)))
		Expect(text(`#failed`)).To(ContainSubstring("broken"))
		// A ring rounds to a whole percent, but a few online of many never
		// reads as none, nor all but one as all.
		shares, err := chromedp.Run(bounded(), chromedp.Evaluate[[]string](
			`import('./charts.js').then((m) => [[0, 0], [0, 5], [3, 1004], [4, 5], [1003, 1004], [5, 5]].map(([p, w]) => m.percent(p, w)))`, chromedp.EvalAwaitPromise))
		Expect(err).NotTo(HaveOccurred())
		Expect(shares).To(Equal([]string{"—", "0%", "<1%", "80%", ">99%", "100%"}))
		screenshot("overview")
	})

	It("finds nodes by name, a page at a time", func() {
		open("#/nodes?name=sylixos")
		Expect(sys.List(ctx, "/api/v1/node", "name", "sylixos").Total).To(Equal(1))
		Expect(eval[[]string](`[...document.querySelectorAll('.live tbody tr td:first-child')].map(td => td.textContent)`)).To(Equal([]string{"edge-sylixos-03"}))
		Expect(text(".pager")).To(ContainSubstring("1 in all"))
		// The search form navigates: the query is in the URL, the back
		// button returns to the whole list.
		open("#/nodes")
		Expect(chromedp.Do(bounded(),
			chromedp.SetValue(chromedp.CSS(`input[name=name]`), "linux-0"),
			chromedp.Click(chromedp.CSS(`form.search button[type=submit]`)), waitDrawn())).To(Succeed())
		Eventually(func() string { return eval[string](`location.hash`) }).Should(Equal("#/nodes?name=linux-0&page=1"))
		Eventually(func() int { return eval[int](`document.querySelectorAll('.live tbody tr').length`) }).Should(Equal(3))
		screenshot("nodes")
		Expect(chromedp.Do(bounded(), chromedp.NavigateBack(), waitDrawn())).To(Succeed())
		Eventually(func() int { return eval[int](`document.querySelectorAll('.live tbody tr').length`) }).Should(Equal(4))
	})

	It("shows a node with its containers, searchable by key", func() {
		n := nodeByName("edge-linux-01")
		open(fmt.Sprintf("#/node/%s?name=edge-linux-01", n["id"]))
		Expect(text("dl.facts")).To(ContainSubstring("online"))
		Eventually(func() string { return text(".live table") }).Should(ContainSubstring("web"))
		screenshot("node")
		open(fmt.Sprintf("#/node/%s?name=edge-linux-01&key=broken", n["id"]))
		Expect(text(".live")).To(ContainSubstring("No container matches."))
	})

	It("puts a failed instance's failedMessage first on its page", func() {
		c := sys.ContainersOf(ctx, "broken")[0]
		Expect(c["failedMessage"]).NotTo(BeEmpty())
		open("#/container/" + c["taskId"].(string))
		Expect(text(`.alert[role=alert]`)).To(Equal("Failed: " + c["failedMessage"].(string)))
		Expect(text("dl.facts")).To(ContainSubstring(c["nodeName"].(string)))
		screenshot("container")
	})

	It("shows how far the pull an instance waits on has come", func() {
		big := service("big", "big@1#linux", []string{"edge-linux-02"})
		Expect(sys.Client.Create(ctx, big)).To(Succeed())
		DeferCleanup(func() { Expect(sys.Client.Delete(ctx, big)).To(Succeed()) })
		var c map[string]any
		Eventually(func(g Gomega) {
			cs := sys.ContainersOf(ctx, "big")
			g.Expect(cs).To(HaveLen(1))
			c = cs[0]
			g.Expect(c["imagePull"]).To(HaveKeyWithValue("bytesTotal", BeNumerically("==", 10<<20)))
		}).Should(Succeed(), "the facade's container item carries the pull")
		Expect(c["deployStatus"]).To(Equal("deploying"))
		open("#/container/" + c["taskId"].(string))
		Eventually(func() string { return strings.TrimSpace(text(`.pull[role=status]`)) }).Should(Equal("pulling big@1#linux: 0 B of 10.0 MiB (0%)"))
		Expect(eval[string](`document.querySelector('.pull progress').getAttribute('max')`)).To(Equal(fmt.Sprint(10 << 20)))
		screenshot("container-pull")
	})

	It("compares two revisions of a service and shows the changed key", func() {
		svc := &edgev1alpha1.EdgeService{}
		Expect(sys.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, svc)).To(Succeed())
		patch := client.MergeFrom(svc.DeepCopy())
		svc.Spec.Cmd = []string{"/bin/web", "--title", hostile, "--verbose"}
		Expect(sys.Client.Patch(ctx, svc, patch)).To(Succeed())
		id := string(svc.UID)
		Eventually(func() int { return sys.List(ctx, "/api/v1/service/record", "id", id).Total }).Should(Equal(2))

		open(fmt.Sprintf("#/service/%s?name=web", id))
		Eventually(func() int { return eval[int](`document.querySelectorAll('.diff-pick tbody tr').length`) }).Should(Equal(2))
		screenshot("service")
		click(`.diff-pick button[type=submit]`)
		Eventually(func() string { return eval[string](`location.hash`) }).Should(HavePrefix("#/diff?"))
		changed := func() []string {
			return eval[[]string](`[...document.querySelectorAll('table.diff tr.changed th')].map(th => th.textContent)`)
		}
		Eventually(changed).Should(ContainElement("cmd[3]"))
		Expect(changed()).NotTo(ContainElement("cmd[0]"))
		screenshot("diff")
	})

	It("shows every string from the API as text, never as HTML", func() {
		id := sys.ServiceID(ctx, "web")
		rec := sys.List(ctx, "/api/v1/service/record", "id", id).List[0]
		// A folder's name may hold markup: the tree shows it as text.
		Expect(sys.Call(ctx, http.MethodPost, "/api/v1/provision-template/path-label/folder", map[string]string{"path": "/", "name": hostile}, nil)).To(Equal(http.StatusOK))
		for _, view := range []string{fmt.Sprintf("#/service/%s?name=web", id), "#/record/" + rec["id"].(string), "#/templates"} {
			open(view)
			Eventually(func() string { return text(".live") }).Should(ContainSubstring(hostile))
			Expect(eval[int](`document.querySelectorAll('img').length`)).To(BeZero(), view)
		}
		screenshot("record")
	})

	It("turns a silenced node offline on screen within one refresh", func() {
		open("#/nodes")
		row := fmt.Sprintf(`[...document.querySelectorAll('.live tbody tr')].find(tr => tr.cells[0].textContent === %q).cells[1].textContent`, silentNode)
		Expect(eval[string](row)).To(Equal("online"))
		silence()
		Eventually(func() any { return nodeByName(silentNode)["status"] }).Should(Equal("offline"))
		// The console's refresh is 5 s; the screen follows within one.
		Eventually(func() string { return eval[string](row) }).WithTimeout(7 * time.Second).Should(Equal("offline"))
	})

	It("reads at phone width, in dark mode", func() {
		_, err := chromedp.Call(bounded(), emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: 390, Height: 844, DeviceScaleFactor: 2, Mobile: true})
		Expect(err).NotTo(HaveOccurred())
		_, err = chromedp.Call(bounded(), emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			_, err := chromedp.Call(browser, emulation.ClearDeviceMetricsOverride, cdp.Empty{})
			Expect(err).NotTo(HaveOccurred())
			_, err = chromedp.Call(browser, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
			Expect(err).NotTo(HaveOccurred())
		})
		open("#/")
		// Nothing wider than the screen but the tables' own scroll areas.
		Expect(eval[int](`document.documentElement.scrollWidth`)).To(BeNumerically("<=", 390))
		screenshot("overview-phone-dark")
	})

	It("searches and pages through a thousand nodes as the contract does", func() {
		// A thousand EdgeNodes as an admin would create them; no agent
		// runs them, so they are offline, which the list shows as it is.
		work := make(chan int)
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				defer GinkgoRecover()
				for i := range work {
					Expect(sys.Client.Create(ctx, &edgev1alpha1.EdgeNode{
						ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bulk-%04d", i)},
						Spec:       edgev1alpha1.EdgeNodeSpec{Address: fmt.Sprintf("10.1.%d.%d:7200", i/250, i%250+1), Type: "linux", Arch: "arm64"},
					})).To(Succeed())
				}
			})
		}
		for i := range 1000 {
			work <- i
		}
		close(work)
		wg.Wait()
		Eventually(func() int { return sys.List(ctx, "/api/v1/node", "name", "bulk").Total }).Should(Equal(1000))

		rows := `[...document.querySelectorAll('.live tbody tr td:first-child')].map(td => td.textContent)`
		contract := func(page int) []string {
			var names []string
			for _, n := range sys.List(ctx, "/api/v1/node", "name", "bulk", "pageNum", strconv.Itoa(page), "pageSize", "50").List {
				names = append(names, n["name"].(string))
			}
			return names
		}
		open("#/nodes?name=bulk")
		Expect(text(".pager")).To(ContainSubstring("page 1 of 20 · 1000 in all"))
		Expect(eval[[]string](rows)).To(Equal(contract(1)))
		click(`.pager a[rel=next]`)
		Eventually(func() string { return text(".pager") }).Should(ContainSubstring("page 2 of 20"))
		Expect(eval[[]string](rows)).To(Equal(contract(2)))
		open("#/nodes?name=bulk&page=20")
		Expect(eval[[]string](rows)).To(Equal(contract(20)))
		open("#/nodes?name=bulk-0777")
		Expect(eval[[]string](rows)).To(Equal([]string{"bulk-0777"}))
		// The overview asks about every node, 200 ids a request.
		open("#/")
		Eventually(func() string { return text(`a.ring[aria-label^="Nodes online"] .card-figure`) }).Should(Equal("3 / 1004"))
		Expect(eval[int](`document.querySelectorAll('.grid a.cell').length`)).To(Equal(1004))
	})

	It("creates folders and templates with forms whose errors are the envelope's fieldErrors", func() {
		// What the facade itself answers to a body, for comparison.
		refusal := func(path string, body any) map[string]string {
			b, err := json.Marshal(body)
			Expect(err).NotTo(HaveOccurred())
			resp, err := http.Post(sys.Base+path, "application/json", bytes.NewReader(b))
			Expect(err).NotTo(HaveOccurred())
			defer func() { _ = resp.Body.Close() }()
			var env struct {
				FieldErrors map[string]string `json:"fieldErrors"`
			}
			Expect(json.NewDecoder(resp.Body).Decode(&env)).To(Succeed())
			return env.FieldErrors
		}
		errorOf := func(form int, f string) string {
			return eval[string](fmt.Sprintf(`document.querySelectorAll('form.create')[%d].querySelector('.field-error[data-field=%q]').textContent`, form, f))
		}
		fill := func(form int, values map[string]string) {
			GinkgoHelper()
			for k, v := range values {
				Expect(chromedp.Do(bounded(), chromedp.SetValue(chromedp.CSS(fmt.Sprintf(`form.create:nth-of-type(%d) [name=%s]`, form+1, k)), v))).To(Succeed())
			}
			Expect(chromedp.Do(bounded(), chromedp.Click(chromedp.CSS(fmt.Sprintf(`form.create:nth-of-type(%d) button[type=submit]`, form+1))))).To(Succeed())
		}
		expectRefusals(sys.Base, "400", "/api/v1/provision-template/")
		open("#/templates")

		want := refusal("/api/v1/provision-template/path-label/folder", map[string]string{"path": "plant", "name": "a/b"})
		Expect(want).To(HaveKey("path"))
		fill(0, map[string]string{"path": "plant", "name": "a/b"})
		Eventually(func() string { return errorOf(0, "path") }).Should(Equal("path: " + want["path"]))
		Expect(errorOf(0, "name")).To(Equal("name: " + want["name"]))
		screenshot("templates-errors")

		fill(0, map[string]string{"path": "/plant", "name": "line-9"})
		Eventually(func() string { return text("form.create:nth-of-type(1) .result") }).Should(ContainSubstring("Created folder /plant/line-9"))
		Expect(errorOf(0, "path")).To(BeEmpty())
		folders := func() []string {
			l := &edgev1alpha1.ProvisionTemplateList{}
			Expect(sys.Client.List(ctx, l)).To(Succeed())
			var out []string
			for _, t := range l.Items {
				out = append(out, fmt.Sprintf("%s %s/%s %s", t.Spec.Type, t.Spec.Path, t.Spec.Name, t.Spec.ImageRef))
			}
			return out
		}
		Expect(folders()).To(ContainElement(HavePrefix("folder /plant/line-9")))
		// The tree opens the way down to the new folder and shows it.
		treeItem := func(path string) string {
			return fmt.Sprintf(`ul[role=tree] li[data-path=%q]`, path)
		}
		Eventually(func() bool {
			return eval[bool](fmt.Sprintf(`!!document.querySelector('%s')`, treeItem("/plant/line-9")))
		}).Should(BeTrue())
		Expect(eval[string](fmt.Sprintf(`document.querySelector('%s').getAttribute('aria-expanded')`, treeItem("/plant")))).To(Equal("true"))

		want = refusal("/api/v1/provision-template/path-label/service/batch", map[string]any{"path": "/plant/line-9", "imageRefs": []string{"web@1.0#linux", "not a ref"}})
		Expect(want).To(HaveKey("imageRefs[1]"))
		fill(1, map[string]string{"path": "/plant/line-9", "imageRefs": "web@1.0#linux\nnot a ref"})
		Eventually(func() string { return errorOf(1, "imageRefs") }).Should(Equal("imageRefs[1]: " + want["imageRefs[1]"]))

		fill(1, map[string]string{"path": "/plant/line-9", "imageRefs": "web@1.0#linux\ndb@2#linux"})
		Eventually(func() string { return text("form.create:nth-of-type(2) .result") }).Should(ContainSubstring("Created 2 template(s)"))
		Expect(folders()).To(ContainElements(HavePrefix("template /plant/line-9/web"), HavePrefix("template /plant/line-9/db")))
		// The folder the templates went in is opened, and lists them as the
		// contract's read of the folder does.
		leaves := `[...document.querySelectorAll('li[data-path="/plant/line-9"] > ul > li.leaf')].map(li => li.dataset.path)`
		var listed []string
		for _, e := range sys.List(ctx, "/api/v1/provision-template/path-label", "path", "/plant/line-9", "pageSize", "-1").List {
			listed = append(listed, e["path"].(string))
		}
		Expect(listed).To(Equal([]string{"/plant/line-9/db", "/plant/line-9/web"}))
		Eventually(func() []string { return eval[[]string](leaves) }).Should(Equal(listed))
		screenshot("templates")

		By("closing and opening a folder by keyboard, keeping the focus on its button")
		twisty := `document.getElementById('open:/plant/line-9')`
		eval[bool](twisty + `.focus(); true`)
		Expect(chromedp.Do(bounded(), chromedp.KeyEvent("\r"))).To(Succeed())
		Eventually(func() int { return eval[int](`document.querySelectorAll('li[data-path="/plant/line-9"] li').length`) }).Should(BeZero())
		Expect(eval[string](`document.activeElement.id`)).To(Equal("open:/plant/line-9"))
		Expect(chromedp.Do(bounded(), chromedp.KeyEvent("\r"))).To(Succeed())
		Eventually(func() []string { return eval[[]string](leaves) }).Should(Equal(listed))
	})

	It("lists what a delete by path removes, asks for the path again, and deletes exactly that", func() {
		create := func(name, path string) {
			GinkgoHelper()
			s := service(name, "app@1#linux", []string{"edge-linux-01"})
			s.Spec.Path = edgev1alpha1.FolderPath(path)
			Expect(sys.Client.Create(ctx, s)).To(Succeed())
		}
		under := func() []string {
			var out []string
			for _, x := range sys.List(ctx, "/api/v1/service/path", "path", "/retire", "pageSize", "-1").List {
				out = append(out, x["name"].(string))
			}
			return out
		}
		exists := func(name string) bool {
			err := sys.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &edgev1alpha1.EdgeService{})
			return err == nil
		}
		create("old-a", "/retire")
		create("old-b", "/retire/line")
		create("keep", "/retire-2")
		Eventually(under).Should(Equal([]string{"old-a", "old-b"}))

		rows := `[...document.querySelectorAll('.live tbody tr td:first-child')].map(td => td.textContent)`
		open("#/delete?path=/retire")
		Expect(eval[[]string](rows)).To(Equal(under()))
		Expect(eval[bool](`document.querySelector('form.confirm button[type=submit]').disabled`)).To(BeTrue(), "nothing goes before the path is typed again")
		Expect(chromedp.Do(bounded(), chromedp.SendKeys(chromedp.CSS(`#confirm-path`), "/retire"))).To(Succeed())
		Expect(eval[bool](`document.querySelector('form.confirm button[type=submit]').disabled`)).To(BeFalse())
		screenshot("delete-confirm")

		By("a service appearing under the path after the list was shown: nothing is deleted, and the list is shown again")
		create("old-late", "/retire/new")
		Eventually(under).Should(HaveLen(3))
		expectRefusals(sys.Base, "409", "/api/v1/service/path")
		Expect(chromedp.Do(bounded(), chromedp.Click(chromedp.CSS(`form.confirm button[type=submit]`)))).To(Succeed())
		Eventually(func() string { return text(`.live .alert`) }).Should(ContainSubstring("not the ones given"))
		Eventually(func() []string { return eval[[]string](rows) }).Should(Equal([]string{"old-a", "old-b", "old-late"}))
		Expect(exists("old-a") && exists("old-b") && exists("old-late")).To(BeTrue())

		By("confirming the list as it is now")
		Expect(chromedp.Do(bounded(), chromedp.SendKeys(chromedp.CSS(`#confirm-path`), "/retire"),
			chromedp.Click(chromedp.CSS(`form.confirm button[type=submit]`)))).To(Succeed())
		Eventually(func() string { return text(`.live [role=status]`) }).Should(ContainSubstring("Deleted 3 of 3 service(s) under /retire"))
		Expect(eval[[]string](rows)).To(Equal([]string{"old-a", "old-b", "old-late"}), "each item's result, by name")
		screenshot("delete-result")
		Eventually(func() bool { return exists("old-a") || exists("old-b") || exists("old-late") }).Should(BeFalse())
		Expect(exists("keep")).To(BeTrue(), "/retire-2 is not below /retire")
		Expect(under()).To(BeEmpty())
	})

	It("shows a node whose engine stopped answering as not ready on the overview", func() {
		ready := func() string {
			probed, ok := 0, 0
			for _, n := range sys.List(ctx, "/api/v1/node", "pageSize", "-1").List {
				if r, has := n["runtimeReady"].(bool); has && n["status"] == "online" {
					probed++
					if r {
						ok++
					}
				}
			}
			return fmt.Sprintf("%d / %d", ok, probed)
		}
		open("#/")
		Eventually(func() string { return text(`a.ring[aria-label^="Runtimes ready"] .card-figure`) }).Should(Equal("3 / 3"))
		engineDown.Store(true)
		DeferCleanup(func() { engineDown.Store(false) })
		Eventually(ready).Should(Equal("2 / 3"))
		Eventually(func() string { return text(`a.ring[aria-label^="Runtimes ready"] .card-figure`) }).WithTimeout(7 * time.Second).Should(Equal("2 / 3"))
		Expect(text(`#runtime`)).To(ContainSubstring(engineNode))
		Expect(eval[string](fmt.Sprintf(`document.querySelector('.grid a.cell[title^=%q]').className`, engineNode+":"))).To(ContainSubstring("tone-warn"))
		screenshot("overview-runtime")
		engineDown.Store(false)
		Eventually(ready).Should(Equal("3 / 3"))
	})

	It("asks for nothing while the tab is hidden, and refreshes at once when it is shown", func() {
		open("#/nodes")
		requests := `performance.getEntriesByType('resource').filter(e => e.name.includes('/api/v1/')).length`
		// The page sees what a browser tells it when the tab goes to the
		// background: document.hidden and a visibilitychange event.
		setHidden := func(hidden bool) {
			GinkgoHelper()
			eval[bool](fmt.Sprintf(`Object.defineProperty(document, 'hidden', {configurable: true, get: () => %t}); document.dispatchEvent(new Event('visibilitychange')); true`, hidden))
		}
		eval[bool](`performance.setResourceTimingBufferSize(100000); true`)
		setHidden(true)
		before := eval[int](requests)
		Consistently(func() int { return eval[int](requests) }).WithTimeout(12 * time.Second).WithPolling(time.Second).Should(Equal(before))
		setHidden(false)
		Eventually(func() int { return eval[int](requests) }).WithTimeout(3 * time.Second).Should(BeNumerically(">", before))
	})

	It("lists services with their health, and scales one and changes its image version, with refusals beside the fields", func() {
		fleet := &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "fleet"},
			Spec: edgev1alpha1.EdgeServiceSpec{DeploySpec: edgev1alpha1.DeploySpec{Path: "/plant", Image: edgev1alpha1.ImageSpec{Ref: "web@1.0#linux"},
				Policy: edgev1alpha1.PolicyDynamic, Factor: ptr.To[int32](1)}}}
		Expect(sys.Client.Create(ctx, fleet)).To(Succeed())
		DeferCleanup(func() { Expect(sys.Client.Delete(ctx, fleet)).To(Succeed()) })
		health := func(name string) string {
			return eval[string](fmt.Sprintf(`[...document.querySelectorAll('.live tbody tr')].find(tr => tr.cells[0].textContent === %q)?.cells[1].textContent || ''`, name))
		}
		open("#/services")
		Eventually(func() string { return health("fleet") }).Should(Equal("ready"))
		Expect(health("broken")).To(HavePrefix("stalled"), "its instance failed")
		var names []string
		for _, x := range sys.List(ctx, "/api/v1/service", "pageSize", "-1").List {
			names = append(names, x["name"].(string))
		}
		Expect(eval[[]string](`[...document.querySelectorAll('.live tbody tr td:first-child')].map(td => td.textContent)`)).To(Equal(names), "the facade's list, in its order")
		screenshot("services")

		By("refusals, as the facade says them, beside their fields; nothing is written")
		open(fmt.Sprintf("#/service/%s?name=fleet", fleet.UID))
		errorOf := func(form, field string) string {
			return eval[string](fmt.Sprintf(`document.querySelector('form[data-form=%s] .field-error[data-field=%s]')?.textContent || ''`, form, field))
		}
		expectRefusals(sys.Base, "400", "/api/v1/service/")
		submit(`form[data-form=scale]`, "factor", "0")
		Eventually(func() string { return errorOf("scale", "factor") }).Should(Equal("factor: must be between 1 and 10000"))
		submit(`form[data-form=version]`, "imageVersion", "2.0#sylixos")
		Eventually(func() string { return errorOf("version", "imageVersion") }).Should(ContainSubstring("is no image version"))
		screenshot("service-errors")
		Expect(sys.Client.Get(ctx, client.ObjectKeyFromObject(fleet), fleet)).To(Succeed())
		Expect(fleet.Generation).To(Equal(int64(1)))

		By("scaling, then a new version: each a new revision, which the page follows")
		submit(`form[data-form=scale]`, "factor", "2")
		Eventually(func() string { return text(`.live [role=status].notice`) }).Should(Equal("Scaled fleet to 2 instances."))
		Eventually(func() string { return text(`.live dl.facts`) }).Should(ContainSubstring("2 of 2 run revision 2"))
		submit(`form[data-form=version]`, "imageVersion", "1.1")
		Eventually(func() string { return text(`.live [role=status].notice`) }).Should(ContainSubstring("now asks for web@1.1#linux"))
		Eventually(func() string { return text(`.live dl.facts`) }).Should(ContainSubstring("2 of 2 run revision 3"))
		Expect(sys.Client.Get(ctx, client.ObjectKeyFromObject(fleet), fleet)).To(Succeed())
		Expect(fleet.Spec.Factor).To(Equal(ptr.To[int32](2)))
		Expect(fleet.Spec.Image.Ref).To(BeEquivalentTo("web@1.1#linux"))
		screenshot("service-actions")
	})

	It("rolls a service back from its record list and from the compare view, showing the diff it applies", func() {
		svc := &edgev1alpha1.EdgeService{}
		Expect(sys.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, svc)).To(Succeed())
		id := string(svc.UID)
		records := func() int { return sys.List(ctx, "/api/v1/service/record", "id", id).Total }
		before := records()
		Expect(before).To(BeNumerically(">=", 2), "the compare spec changed web's command")

		open(fmt.Sprintf("#/service/%s?name=web", id))
		Eventually(func() int { return eval[int](`document.querySelectorAll('.diff-pick tbody tr').length`) }).Should(Equal(before))
		click(`.diff-pick tbody tr:nth-child(2) a.rollback`)
		Eventually(func() string { return eval[string](`location.hash`) }).Should(HavePrefix("#/diff?"))
		Eventually(func() bool { return eval[bool](`!!document.querySelector('form.rollback button')`) }).Should(BeTrue())
		Expect(eval[[]string](`[...document.querySelectorAll('table.diff tr.changed th')].map(th => th.textContent)`)).To(ContainElement("cmd[3]"),
			"the confirmation shows the keys it changes")
		screenshot("rollback-confirm")
		click(`form.rollback button[type=submit]`)
		Eventually(func() string { return eval[string](`location.hash`) }).Should(HavePrefix("#/service/"))
		Eventually(func() string { return text(`.live [role=status].notice`) }).Should(ContainSubstring("Rolled back to the configuration of revision"))
		Eventually(records).Should(Equal(before + 1))
		Eventually(func() int { return eval[int](`document.querySelectorAll('.diff-pick tbody tr').length`) }).Should(Equal(before+1), "the new revision appears")
		Expect(sys.Client.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
		Expect(svc.Spec.Cmd).To(Equal([]string{"/bin/web", "--title", hostile}))
		screenshot("rollback-done")

		By("the compare view of the two newest offers the same, against the current revision")
		click(`.diff-pick button[type=submit]`)
		Eventually(func() bool { return eval[bool](`!!document.querySelector('form.rollback button')`) }).Should(BeTrue())
	})

	It("deploys a template from the tree, with refusals beside the fields", func() {
		Expect(sys.Call(ctx, http.MethodPost, "/api/v1/provision-template/path-label/service/batch",
			map[string]any{"path": "/", "imageRefs": []string{"tiny@1.0#linux"}}, nil)).To(Equal(http.StatusOK))
		open("#/templates")
		Eventually(func() bool { return eval[bool](`!!document.querySelector('li[data-path="/tiny"] button.deploy')`) }).Should(BeTrue())
		Expect(chromedp.Do(bounded(), chromedp.Click(chromedp.CSS(`li[data-path="/tiny"] button.deploy`)))).To(Succeed())
		Expect(eval[string](`document.getElementById('deploy-template').value`)).To(Equal("/tiny"))
		deploy := func(values map[string]string) {
			GinkgoHelper()
			for k, v := range values {
				Expect(chromedp.Do(bounded(), chromedp.SetValue(chromedp.CSS(fmt.Sprintf(`form.deploy [name=%s]`, k)), v))).To(Succeed())
			}
			Expect(chromedp.Do(bounded(), chromedp.Click(chromedp.CSS(`form.deploy button[type=submit]`)))).To(Succeed())
		}
		expectRefusals(sys.Base, "400", "/api/v1/service")
		deploy(map[string]string{"nodes": "edge-linux-01", "factor": "2"})
		Eventually(func() string {
			return eval[string](`document.querySelector('form.deploy .field-error[data-field=factor]').textContent`)
		}).Should(ContainSubstring("not both"))
		Expect(sys.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "tiny"}, &edgev1alpha1.EdgeService{})).NotTo(Succeed())

		// chromedp sets "" as undefined, which a number input refuses.
		eval[bool](`document.querySelector('form.deploy [name=factor]').value = ''; true`)
		deploy(map[string]string{"nodes": "edge-linux-01"})
		Eventually(func() string { return text(`form.deploy .result`) }).Should(ContainSubstring("Created service tiny (static, tiny@1.0#linux)"))
		screenshot("deploy-template")
		tiny := &edgev1alpha1.EdgeService{}
		Expect(sys.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "tiny"}, tiny)).To(Succeed())
		DeferCleanup(func() { Expect(sys.Client.Delete(ctx, tiny)).To(Succeed()) })
		Expect(tiny.Spec.Nodes).To(Equal([]string{"edge-linux-01"}))
		click(`form.deploy .result a`)
		Eventually(func() string { return text(`.live dl.facts`) }).Should(ContainSubstring("tiny@1.0#linux"))
	})

	It("adds a node from the Nodes view and shows the command that joins its device, and a new token on the node's page", func() {
		// The hub's info, as a running hub publishes it.
		Expect(sys.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "edgeplane-system"}})).To(Succeed())
		ca, err := testenv.NewCA("edge hub")
		Expect(err).NotTo(HaveOccurred())
		info := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "edgeplane-system", Name: hubapi.InfoConfigMap},
			Data: map[string]string{hubapi.InfoServer: "https://hub.example:8443", hubapi.InfoCACert: string(ca.PEM)}}
		Expect(sys.Client.Create(ctx, info)).To(Succeed())
		DeferCleanup(func() { Expect(sys.Client.Delete(ctx, info)).To(Succeed()) })

		open("#/nodes?name=edge-added")
		Eventually(func() bool { return eval[bool](`!!document.querySelector('form[data-form=add-node]')`) }).Should(BeTrue())
		expectRefusals(sys.Base, "400", "/api/v1/node")
		submit(`form[data-form=add-node]`, "name", "edge-added-05", "address", "nowhere")
		Eventually(func() string {
			return eval[string](`document.querySelector('form[data-form=add-node] .field-error[data-field=address]').textContent`)
		}).Should(ContainSubstring("host:port"))
		Expect(sys.Client.Get(ctx, client.ObjectKey{Name: "edge-added-05"}, &edgev1alpha1.EdgeNode{})).NotTo(Succeed())

		submit(`form[data-form=add-node]`, "name", "edge-added-05", "address", "10.0.0.5:7200", "type", "linux", "arch", "arm64", "labels", "site=plant-a,line=3", "ttl", "30")
		command := func() string {
			return eval[string](`document.querySelector('[data-join=add-node] input.join-command')?.value || ''`)
		}
		Eventually(command).Should(HavePrefix("edge-agent join --hub "))
		Expect(command()).To(MatchRegexp(`^edge-agent join --hub https://hub\.example:8443 --token [a-z0-9]{6}\.[a-z0-9]{16} --ca-cert-hash sha256:[0-9a-f]{64}$`))
		Expect(text(`[data-join=add-node]`)).To(ContainSubstring("The token joins the node once, until"))
		Expect(eval[bool](`document.querySelector('[data-join=add-node] input.join-command').readOnly`)).To(BeTrue())
		node := &edgev1alpha1.EdgeNode{}
		Expect(sys.Client.Get(ctx, client.ObjectKey{Name: "edge-added-05"}, node)).To(Succeed())
		Expect(node.Labels).To(Equal(map[string]string{"site": "plant-a", "line": "3"}))
		// The node appears in the list, the command stays on screen.
		Eventually(func() string { return text(`.live table`) }).Should(ContainSubstring("edge-added-05"))
		Expect(command()).To(HavePrefix("edge-agent join --hub "))
		// Copy: the clipboard when the browser grants it, else the text is
		// selected for the person to copy.
		Expect(chromedp.Do(bounded(), chromedp.Click(chromedp.CSS(`[data-join=add-node] button.copy`)))).To(Succeed())
		Eventually(func() string { return text(`[data-join=add-node] .copy-said`) }).Should(Or(Equal("Copied."), HavePrefix("Selected")))
		screenshot("node-add")

		// A name taken is the envelope's 409, beside the name.
		expectRefusals(sys.Base, "409", "/api/v1/node")
		submit(`form[data-form=add-node]`, "name", "edge-added-05", "address", "10.0.0.5:7200")
		Eventually(func() string {
			return eval[string](`document.querySelector('form[data-form=add-node] .field-error[data-field=name]').textContent`)
		}).Should(ContainSubstring("is taken"))

		// A new token on the node's page.
		click(`.live table a[href^="#/node/` + string(node.UID) + `"]`)
		Eventually(func() bool { return eval[bool](`!!document.querySelector('form[data-form=new-token]')`) }).Should(BeTrue())
		submit(`form[data-form=new-token]`, "ttl", "15")
		tokenCommand := func() string {
			return eval[string](`document.querySelector('[data-join^=token-] input.join-command')?.value || ''`)
		}
		Eventually(tokenCommand).Should(HavePrefix("edge-agent join --hub https://hub.example:8443 --token "))
		Expect(tokenCommand()).NotTo(Equal(command()))
		secrets := &corev1.SecretList{}
		Expect(sys.Client.List(ctx, secrets, client.InNamespace("edgeplane-system"), client.MatchingLabels{hubapi.LabelJoinNode: "edge-added-05"})).To(Succeed())
		Expect(secrets.Items).To(HaveLen(2))
	})

	It("is served with a policy that allows no inline script and no framing", func() {
		resp, err := http.Get(consoleURL(""))
		Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		Expect(csp).To(ContainSubstring("script-src 'self'"))
		Expect(csp).To(ContainSubstring("frame-ancestors 'none'"))
		Expect(strings.Contains(csp, "unsafe")).To(BeFalse())
		Expect(resp.Header.Get("X-Content-Type-Options")).To(Equal("nosniff"))
	})
})
