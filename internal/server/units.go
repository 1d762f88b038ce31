package server

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/redisx"
)

// sharedUnits is the units' results (check.Cache) in this replica's
// memory, backed by Redis where every replica reads them: a pull request
// checked by one replica costs another only the units that changed. Redis
// is a cache here: a result it cannot give in unitsTimeout, or cannot
// decode, is a miss (the unit is checked), and one it cannot store is
// kept in memory only.
type sharedUnits struct {
	local *check.LRU
	blobs *redisx.Blobs
}

// unitsTTL is how long Redis keeps a unit's result after its last write.
const unitsTTL = 7 * 24 * time.Hour

// unitsTimeout bounds one Redis read or write of a unit's result.
const unitsTimeout = 2 * time.Second

func newSharedUnits(store *redisx.Store, n int) sharedUnits {
	return sharedUnits{local: check.NewLRU(n), blobs: store.Blobs("phasegate:unit:", unitsTTL)}
}

func (u sharedUnits) Get(key [32]byte) (*check.Unit, bool) {
	if unit, ok := u.local.Get(key); ok {
		return unit, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), unitsTimeout)
	defer cancel()
	data, ok, err := u.blobs.Get(ctx, hex.EncodeToString(key[:]))
	if err != nil || !ok {
		return nil, false
	}
	var unit check.Unit
	if json.Unmarshal(data, &unit) != nil {
		return nil, false
	}
	u.local.Add(key, &unit)
	return &unit, true
}

func (u sharedUnits) Add(key [32]byte, unit *check.Unit) {
	u.local.Add(key, unit)
	data, err := json.Marshal(unit)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), unitsTimeout)
	defer cancel()
	_ = u.blobs.Put(ctx, hex.EncodeToString(key[:]), data) // kept in memory either way
}
