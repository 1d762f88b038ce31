#!/usr/bin/env python3
"""Writes the JSON schemas kubeconform checks deploy/kubernetes/ against.

    scripts/kubernetes-schemas.py SWAGGER_JSON OUT_DIR

SWAGGER_JSON is api/openapi-spec/swagger.json of the Kubernetes release the
schemas pin (internal/archtest/testdata/kubernetes-schemas/VERSION says
which), from the k8s.io/kubernetes module of that version:

    go mod download -json k8s.io/kubernetes@v1.34.4   # its "Dir"

For each kind deploy/kubernetes/ uses it writes one self-contained schema,
named as kubeconform's -schema-location template
{{.ResourceKind}}{{.KindSuffix}}.json expects, the way the schemas of
yannh/kubernetes-json-schema's *-standalone-strict directories are made:
every $ref inlined, objects closed (additionalProperties false, so that a
misspelt field fails), kind and apiVersion fixed, and the two
string-or-number types (IntOrString, Quantity) accepting both.
"""
import json
import sys

KINDS = {
    "io.k8s.api.apps.v1.Deployment": ("deployment-apps-v1.json", "apps/v1", "Deployment"),
    "io.k8s.api.core.v1.Service": ("service-v1.json", "v1", "Service"),
    "io.k8s.api.policy.v1.PodDisruptionBudget": ("poddisruptionbudget-policy-v1.json", "policy/v1", "PodDisruptionBudget"),
}
EITHER = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": ["string", "integer"],
    "io.k8s.apimachinery.pkg.api.resource.Quantity": ["string", "number"],
}


def expand(node, defs, seen):
    if isinstance(node, list):
        return [expand(n, defs, seen) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].removeprefix("#/definitions/")
        if name in EITHER:
            return {"oneOf": [{"type": t} for t in EITHER[name]]}
        if name in seen:
            sys.exit(f"kubernetes-schemas: {name} refers to itself: not supported")
        return expand(defs[name], defs, seen | {name})
    out = {k: expand(v, defs, seen) for k, v in node.items()}
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def main(swagger, outdir):
    with open(swagger) as f:
        defs = json.load(f)["definitions"]
    for name, (file, api_version, kind) in KINDS.items():
        schema = expand(defs[name], defs, {name})
        schema["properties"]["apiVersion"]["enum"] = [api_version]
        schema["properties"]["kind"]["enum"] = [kind]
        schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind"})
        with open(f"{outdir}/{file}", "w") as f:
            json.dump(schema, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
