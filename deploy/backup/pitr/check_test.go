package main

import (
	"slices"
	"testing"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	// The source, later: 1 and 2 confirmed before the target, 3 after it, 4 pending.
	source := []order{{1, true, false}, {2, true, false}, {3, true, true}, {4, false, false}}
	tests := []struct {
		name     string
		marked   []int64
		restored []order
		source   []order
		want     []string
	}{
		{"a good restore", []int64{1, 2}, []order{{1, true, false}, {2, true, false}, {3, false, false}}, source, nil},
		{"a marked order missing", []int64{1, 2}, []order{{1, true, false}}, source,
			[]string{"order 2, confirmed before the target, is not confirmed"}},
		{"a marked order not confirmed", []int64{1, 2}, []order{{1, true, false}, {2, false, false}}, source,
			[]string{"order 2, confirmed before the target, is not confirmed"}},
		{"the source itself: nothing cut", []int64{1, 2}, source, source, []string{
			"order 3 is confirmed after the target",
			"order 3, confirmed after the target, is confirmed",
		}},
		{"an order confirmed after the target by a restored program", []int64{1, 2},
			[]order{{1, true, false}, {2, true, false}, {4, true, true}}, source,
			[]string{"order 4 is confirmed after the target"}},
		{"a source that sold nothing after the target", []int64{1, 2},
			[]order{{1, true, false}, {2, true, false}}, source[:2],
			[]string{"the source confirmed no order after the target: the restore cut nothing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := compare(tt.marked, tt.restored, tt.source).Problems
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
