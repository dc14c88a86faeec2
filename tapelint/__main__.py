from tapelint.launch import main

main()
