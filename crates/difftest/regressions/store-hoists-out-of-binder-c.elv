def s = DFNF ;
  storeInMemory(appliedReduce, lowerToC) @ outermost(appliedMap) ;;
  lowerToC
