package server

import (
	"context"

	"toxgate/gateway/modelcat"
)

// attachModelCatalog publishes, when catalog.publish_models is on, one
// dataset per loaded model in catalog.models_org, and again whenever a
// module is added or replaced.
func (a *App) attachModelCatalog(context.Context) error {
	cc := a.cfg.Catalog
	if !cc.PublishModels {
		return nil
	}
	log := a.log.With("component", "modelcat")
	p := modelcat.New(a.modules, a.catalog, a.fileStore, modelcat.Config{
		Org: cc.ModelsOrg, DataDir: cc.ModelsDataDir, SiteURL: SiteURL(a.cfg.Server.PublicURL, a.cfg.Server.Addr), MaxFileBytes: int64(cc.MaxResourceBytes),
		Registerer: a.metrics.Registry(),
	}, log)
	p.Start()
	a.AddCloser("modelcat", p.Close)
	return nil
}
