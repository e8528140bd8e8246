module github.com/gitplus/gitplus

go 1.26.0

require (
	github.com/go-git/go-billy/v5 v5.9.2
	github.com/go-git/go-git/v5 v5.19.3
	github.com/google/uuid v1.6.0
	github.com/hiddeco/sshsig v0.2.0
	github.com/matryer/is v1.4.1
	github.com/sosedoff/gitkit v0.4.0
	github.com/urfave/cli/v2 v2.27.7
	golang.org/x/crypto v0.59.0
)

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.7 // indirect
	github.com/gofrs/uuid v4.0.0+incompatible // indirect
	github.com/pjbgf/sha1cd v0.7.0 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/xrash/smetrics v0.0.0-20240521201337-686a1a2994c1 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
