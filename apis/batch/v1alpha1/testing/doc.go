// Package testing builds batch.volcano.sh/v1alpha1 objects for tests:
//
//	job := batchtesting.MakeJob("j", "ns").Queue("q").
//		Task(batchtesting.MakeTask("worker", 4).MinAvailable(2)).Obj()
package testing
