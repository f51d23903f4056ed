module github.com/abbot/go-http-auth

go 1.26.0
