# One image with dc-controller and dc-deploy: the controller's Deployment runs
# `dc-controller`, deployer pods run `dc-deploy`.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api api
COPY cmd cmd
COPY internal internal
RUN CGO_ENABLED=0 go build -trimpath -o /out/ ./cmd/dc-controller ./cmd/dc-deploy

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/dc-controller /out/dc-deploy /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["dc-controller"]
