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

// Package index registers the field indexes of the informer cache that the
// controllers and the facade look objects up by, so that no lookup scans
// every object of a kind.
package index

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/paths"
)

const (
	// ServiceByNode indexes EdgeServices by the nodes of the instances in
	// their status.containers: nodes whose agent predates NodeAssignment.
	ServiceByNode = "edgeservice.status.containers.nodeName"
	// ServiceBySpecNode indexes EdgeServices by the nodes listed in spec.nodes.
	ServiceBySpecNode = "edgeservice.spec.nodes"
	// ServiceByPolicy indexes EdgeServices by spec.policy.
	ServiceByPolicy = "edgeservice.spec.policy"
	// RecordByServiceName indexes DeployRecords by spec.serviceName, which
	// finds records that lost their label or owner too.
	RecordByServiceName = "deployrecord.spec.serviceName"
	// TemplateByParent indexes ProvisionTemplates by their parent folder,
	// as namespace/path.
	TemplateByParent = "provisiontemplate.parent"
	// FolderByPath indexes folders by their own full path, as namespace/path.
	FolderByPath = "provisiontemplate.folderPath"
	// ServiceByPath indexes EdgeServices by their folder and every folder
	// above it, so that one lookup finds the services at or below a path.
	ServiceByPath = "edgeservice.spec.path.ancestors"
	// ByUID indexes objects of every kind by metadata.uid, the id the
	// facade speaks.
	ByUID = "metadata.uid"
	// AssignmentByService indexes NodeAssignments by the services they
	// hold, as namespace/name.
	AssignmentByService = "nodeassignment.spec.services"
	// AssignmentByTaskID indexes NodeAssignments by the task ids of the
	// instances they hold.
	AssignmentByTaskID = "nodeassignment.spec.services.instances.taskId"
	// ServiceByPullSecret indexes EdgeServices by the Secrets their image
	// pulls with, as namespace/name.
	ServiceByPullSecret = "edgeservice.spec.image.pullSecretRefs"
)

// Register adds every index to the cache behind indexer.
func Register(ctx context.Context, indexer client.FieldIndexer) error {
	indexes := []struct {
		obj     client.Object
		field   string
		extract client.IndexerFunc
	}{
		{&edgev1alpha1.EdgeService{}, ServiceByNode, serviceNodes},
		{&edgev1alpha1.EdgeService{}, ServiceBySpecNode, func(o client.Object) []string {
			return o.(*edgev1alpha1.EdgeService).Spec.Nodes
		}},
		{&edgev1alpha1.EdgeService{}, ServiceByPath, func(o client.Object) []string {
			return paths.Ancestors(string(o.(*edgev1alpha1.EdgeService).Spec.Path))
		}},
		{&edgev1alpha1.EdgeService{}, ByUID, uid},
		{&edgev1alpha1.EdgeService{}, ServiceByPullSecret, func(o client.Object) []string {
			s := o.(*edgev1alpha1.EdgeService)
			out := make([]string, 0, len(s.Spec.Image.PullSecretRefs))
			for _, r := range s.Spec.Image.PullSecretRefs {
				out = append(out, s.Namespace+"/"+r.Name)
			}
			return out
		}},
		{&edgev1alpha1.NodeAssignment{}, AssignmentByService, func(o client.Object) []string {
			a := o.(*edgev1alpha1.NodeAssignment)
			out := make([]string, 0, len(a.Spec.Services))
			for k := range a.Spec.Services {
				out = append(out, k)
			}
			return out
		}},
		{&edgev1alpha1.NodeAssignment{}, AssignmentByTaskID, func(o client.Object) []string {
			var out []string
			for _, e := range o.(*edgev1alpha1.NodeAssignment).Spec.Services {
				for _, i := range e.Instances {
					out = append(out, i.TaskID)
				}
			}
			return out
		}},
		{&edgev1alpha1.EdgeNode{}, ByUID, uid},
		{&edgev1alpha1.DeployRecord{}, ByUID, uid},
		{&edgev1alpha1.ProvisionTemplate{}, ByUID, uid},
		{&edgev1alpha1.EdgeService{}, ServiceByPolicy, func(o client.Object) []string {
			return []string{string(o.(*edgev1alpha1.EdgeService).Spec.Policy)}
		}},
		{&edgev1alpha1.DeployRecord{}, RecordByServiceName, func(o client.Object) []string {
			return []string{o.(*edgev1alpha1.DeployRecord).Spec.ServiceName}
		}},
		{&edgev1alpha1.ProvisionTemplate{}, TemplateByParent, func(o client.Object) []string {
			t := o.(*edgev1alpha1.ProvisionTemplate)
			return []string{Key(t.Namespace, string(t.Spec.Path))}
		}},
		{&edgev1alpha1.ProvisionTemplate{}, FolderByPath, func(o client.Object) []string {
			t := o.(*edgev1alpha1.ProvisionTemplate)
			if t.Spec.Type != edgev1alpha1.TypeFolder {
				return nil
			}
			return []string{Key(t.Namespace, paths.Join(string(t.Spec.Path), t.Spec.Name))}
		}},
	}
	for _, ix := range indexes {
		if err := indexer.IndexField(ctx, ix.obj, ix.field, ix.extract); err != nil {
			return err
		}
	}
	return nil
}

// RegisterServiceByNode adds only the ServiceByNode index, for an agent's
// cache of EdgeServices.
func RegisterServiceByNode(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &edgev1alpha1.EdgeService{}, ServiceByNode, serviceNodes)
}

func serviceNodes(o client.Object) []string {
	return uniqueInstanceFields(o.(*edgev1alpha1.EdgeService), func(i edgev1alpha1.ServiceInstance) string { return i.NodeName })
}

// Key is the index value of a path within a namespace.
func Key(namespace, path string) string { return namespace + "/" + path }

func uid(o client.Object) []string { return []string{string(o.GetUID())} }

func uniqueInstanceFields(s *edgev1alpha1.EdgeService, field func(edgev1alpha1.ServiceInstance) string) []string {
	seen := make(map[string]bool, len(s.Status.Containers))
	var out []string
	for _, i := range s.Status.Containers {
		if v := field(i); v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
