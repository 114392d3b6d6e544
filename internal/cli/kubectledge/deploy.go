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

package kubectledge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/names"
	"github.com/edgeplane/edgeplane/internal/shared/paths"
)

// deployOptions say what service deploy makes of a template.
type deployOptions struct {
	template          string // the template's path in the tree: /folder/name
	templateNamespace string // where the templates are; the service's if empty
	name              string // the service's name; the template's if empty
	nodes             []string
	factor            int32
}

// deploy creates an EdgeService from a ProvisionTemplate: its image and
// the settings it gives a new service, in the template's folder, static
// on nodes or dynamic with factor instances.
func (r *rollout) deploy(ctx context.Context, namespace string, o deployOptions) error {
	p, err := paths.Normalize(o.template)
	if err != nil {
		return fmt.Errorf("--from-template %q: %w", o.template, err)
	}
	if p == "/" {
		return errors.New("--from-template names the root folder; name a template: /FOLDER/NAME")
	}
	switch {
	case len(o.nodes) > 0 && o.factor > 0:
		return errors.New("give --nodes (a static service) or --factor (a dynamic one), not both")
	case len(o.nodes) == 0 && o.factor <= 0:
		return errors.New("give --nodes (a static service on those nodes) or --factor (a dynamic one of that many instances)")
	}
	parent, entry := paths.Split(p)
	tns := o.templateNamespace
	if tns == "" {
		tns = namespace
	}
	t := &edgev1alpha1.ProvisionTemplate{}
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: tns, Name: names.Template(parent, entry)}, t); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("no template %s in namespace %s (--template-namespace names another)", p, tns)
		}
		return err
	}
	if t.Spec.Type != edgev1alpha1.TypeTemplate || t.Spec.Name != entry || string(t.Spec.Path) != parent {
		return fmt.Errorf("%s in namespace %s is a %s, not a template", p, tns, t.Spec.Type)
	}
	name := o.name
	if name == "" {
		name = entry
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("%q cannot name a service (%s); give one with --name", name, strings.Join(errs, "; "))
	}
	svc := &edgev1alpha1.EdgeService{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Spec: t.ServiceSpec(o.nodes, &o.factor)}
	if err := r.c.Create(ctx, svc, client.FieldOwner(FieldManager)); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s%s already exists in namespace %s; give another with --name", kindName, name, namespace)
		}
		return err
	}
	fmt.Fprintf(r.out, "%s%s created from template %s\n", kindName, name, p)
	return nil
}
