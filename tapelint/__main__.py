from tapelint.cli import main

main()
