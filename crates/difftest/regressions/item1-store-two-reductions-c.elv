def s = DFNF ;
  try(storeInMemory(appliedReduce, lowerToC) @ outermost(appliedMap)) ;;
  lowerToC
