package checkjob

import (
	"context"
	"errors"
	"io/fs"

	"github.com/phasegate/phasegate/internal/check"
)

// TEMPORARY until check.Validator.RunFS lands.
func runFS(ctx context.Context, v *check.Validator, fsys fs.FS, opts check.Options) (check.Result, error) {
	return check.Result{}, errors.New("stub")
}
