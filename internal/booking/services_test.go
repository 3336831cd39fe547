package booking

import (
	"reflect"
	"testing"
)

// TestStoreExportsNothing: every part embeds the store, so an exported method of the
// store would be a method of every part, and the cut by caller would leak. The
// control: a part does export its own methods through the same reflection.
func TestStoreExportsNothing(t *testing.T) {
	t.Parallel()
	if n := reflect.TypeFor[*store]().NumMethod(); n != 0 {
		t.Errorf("*store has %d exported methods, want 0", n)
	}
	if _, ok := reflect.TypeFor[*Buyer]().MethodByName("Hold"); !ok {
		t.Error("*Buyer has no exported method Hold: the check sees no exported methods at all")
	}
}
