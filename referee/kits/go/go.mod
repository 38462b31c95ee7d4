module koikoi/{{NAME}}

go 1.19
